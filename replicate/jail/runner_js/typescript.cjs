'use strict';
// The TypeScript loader of the runner and the recorder, preloaded with `--require` only when a
// job runs TypeScript: .ts, .tsx, .mts and .cts files are transpiled (types stripped, nothing
// type-checked) by sucrase, the one package it loads, from the folder the host names in
// REPLICATE_SUCRASE (pinned, installed into the cache, mounted read-only; the variable is
// removed before any of the repository's code runs). CommonJS: `require` of those extensions,
// the `import`/`export` syntax made CommonJS as tsc's `module: commonjs` would. ES modules: the
// module hook `typescript.mjs`, registered here. Sucrase keeps every line where it was, so a
// traceback's lines are the source's.

const fs = require('node:fs');
const Module = require('node:module');
const url = require('node:url');
const path = require('node:path');
const { isMainThread } = require('node:worker_threads');

const SUFFIXES = ['.ts', '.cts', '.tsx'];  // .mts is an ES module: the hook's alone

function loadTool(folder) {
  return require(folder);
}

// `require('./a.js')` in a TypeScript file means `./a.ts` where no `./a.js` is (as tsc's output
// would have it): tried as such when Node finds no file.
const SPELLINGS = [[/\.js$/, '.ts'], [/\.js$/, '.tsx'], [/\.cjs$/, '.cts'], [/\.jsx$/, '.tsx']];

function resolveAsTypeScript() {
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function resolveTypeScript(request, parent, ...rest) {
    try {
      return Reflect.apply(resolveFilename, this, [request, parent, ...rest]);
    } catch (error) {
      const relative = request.startsWith('./') || request.startsWith('../');
      if (!relative || error.code !== 'MODULE_NOT_FOUND') throw error;
      for (const [pattern, suffix] of SPELLINGS) {
        if (!pattern.test(request)) continue;
        try {
          return Reflect.apply(resolveFilename, this, [request.replace(pattern, suffix), parent, ...rest]);
        } catch {
          // the next spelling
        }
      }
      throw error;
    }
  };
}

function install() {
  const folder = process.env.REPLICATE_SUCRASE;
  delete process.env.REPLICATE_SUCRASE;
  if (typeof folder !== 'string' || !path.isAbsolute(folder)) return;
  const { transform } = loadTool(folder);
  const readFileSync = fs.readFileSync;
  for (const suffix of SUFFIXES) {
    Module._extensions[suffix] = function compileTypeScript(module, filename) {
      const transforms = suffix === '.tsx' ? ['typescript', 'jsx', 'imports'] : ['typescript', 'imports'];
      const source = readFileSync(filename, 'utf8');
      const { code } = transform(source, {
        transforms, filePath: filename, disableESTransforms: true, preserveDynamicImport: true,
      });
      module._compile(code, filename);
    };
  }
  resolveAsTypeScript();
  const hook = url.pathToFileURL(path.join(__dirname, 'typescript.mjs')).href;
  Module.register(hook, { data: { sucrase: folder } });
}

// the main thread only: Node loads `--require`d files in its hooks thread as well
if (isMainThread) install();
