// The ES module hook of the TypeScript loader (typescript.cjs registers it, and names the
// sucrase folder): a TypeScript file that is an ES module (.mts, or .ts/.tsx under a package
// whose type is "module") is transpiled here; one that is CommonJS goes to Node's CommonJS
// loader, where typescript.cjs compiles it. A relative import that names no file is tried as
// TypeScript writes it: `./a.js` meaning `./a.ts`, `./a` meaning `./a.ts` or `./a/index.ts`.
// Node built-ins and sucrase only; it runs on Node's hooks thread.

import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let transform = null;
const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;
const TRIES = [
  [/\.js$/, '.ts'], [/\.js$/, '.tsx'], [/\.mjs$/, '.mts'], [/\.cjs$/, '.cts'], [/\.jsx$/, '.tsx'],
  [/$/, '.ts'], [/$/, '.tsx'], [/$/, '/index.ts'], [/$/, '/index.tsx'],
];

function loadTool(folder) {
  return createRequire(import.meta.url)(folder);
}

export async function initialize(data) {
  transform = loadTool(data.sucrase).transform;
}

export async function resolve(specifier, context, nextResolve) {
  try {
    return await nextResolve(specifier, context);
  } catch (error) {
    const relative = specifier.startsWith('./') || specifier.startsWith('../');
    if (!relative || error.code !== 'ERR_MODULE_NOT_FOUND') throw error;
    for (const [pattern, suffix] of TRIES) {
      if (!pattern.test(specifier)) continue;
      try {
        return await nextResolve(specifier.replace(pattern, suffix), context);
      } catch {
        // the next spelling
      }
    }
    throw error;
  }
}

function packageType(file) {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    let text;
    try {
      text = readFileSync(join(dir, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      try {
        return JSON.parse(text).type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (dirname(dir) === dir) return 'commonjs';
  }
}

function formatOf(file) {
  if (file.endsWith('.mts')) return 'module';
  if (file.endsWith('.cts')) return 'commonjs';
  return packageType(file);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !TYPESCRIPT.test(url) || transform === null) {
    return nextLoad(url, context);
  }
  const file = fileURLToPath(url);
  const format = formatOf(file);
  if (format === 'commonjs') return { format, shortCircuit: true };
  const transforms = file.endsWith('.tsx') ? ['typescript', 'jsx'] : ['typescript'];
  const { code } = transform(readFileSync(file, 'utf8'), {
    transforms, filePath: file, disableESTransforms: true,
  });
  return { format, shortCircuit: true, source: code };
}
