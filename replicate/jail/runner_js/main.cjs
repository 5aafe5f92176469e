'use strict';
// The in-jail Node runner: calls one function of a repository's module on each input of a job
// and reports every outcome on the results channel. Node built-ins only, shipped as source.
//
// It speaks the Python runner's framing (replicate/jail/wire.py): stdin is the job, one JSON
// object on one line, then the channel's nonce up to the end of stdin; each frame is one
// `<nonce> <json>` line written to the channel fd in one write, in the order started,
// import_error | ready, loaded, then for each input call (i) and result (i, outcome), then done.
// Its stdout and stderr are the repository's and are never read as frames. Values cross in the
// tagged form of values.cjs, not as pickles.
//
// Everything that does not need the target module is done before the nonce is read: the
// runner's own modules, the TypeScript loader (`--require`d), the job's line parsed, the
// module's format found. A warm jail (replicate/jail/warm.py) is started with the job alone and
// blocks reading the nonce while the candidate's bytes are written into the file bound over the
// target's; the target module is loaded only once the nonce has arrived.
//
// The job: {module (an absolute path), scope (a module-scope name to start from instead
// of the module's exports or namespace, or null), export (property names from there to the
// function or class), kind ("function", "static" or "method"), member (the
// class's method), inputs: [{i, args: [node], this: node}], max_depth, max_items, channel_fd}.
// A "method" input's `this` is an instance node rebuilt on the class's prototype from its own
// fields. An outcome: {status: "returned", value, args, this} or {status: "raised", exc:
// {type, msg}, args, this}, `args` and `this` as they are after the call; a returned promise is
// awaited: {t: "promise", v: value}, or a rejection raised (`async`: true). "load_error" (msg) for an
// input that cannot be rebuilt. A call that ends the process (process.exit) leaves its result
// unwritten, and the host reports it as a failure.

const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const url = require('node:url');
const util = require('node:util');
// taken now: values.cjs's exports object is in require.cache, the repository's to change later
const { decoder, thrown } = require('./values.cjs');
const { channel, each, report } = require('./outcome.cjs');

const readFileSync = fs.readFileSync;
const readSync = fs.readSync;
const parse = JSON.parse;
const apply = Reflect.apply;
const isPromise = util.types.isPromise;
const promiseThen = Promise.prototype.then;
const exit = process.reallyExit ? process.reallyExit.bind(process) : process.exit.bind(process);

// "module" or "commonjs", by Node's own rule: the extension, else the nearest package.json.
function moduleFormat(file) {
  if (/\.m[jt]s$/.test(file)) return 'module';
  if (/\.c[jt]s$/.test(file)) return 'commonjs';
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    let text;
    try {
      text = readFileSync(path.join(dir, 'package.json'), 'utf8');
    } catch {
      text = undefined;
    }
    if (text !== undefined) {
      try {
        return parse(text).type === 'module' ? 'module' : 'commonjs';
      } catch {
        return 'commonjs';
      }
    }
    if (path.dirname(dir) === dir) return 'commonjs';
  }
}

// A module-scope binding the module does not export is reached through one line added after
// the module's last (so no line of it moves): `module[Symbol.for(SCOPE)] = () => name` for
// CommonJS, `export { name as "<SCOPE>" }` for an ES module (scope.mjs).
const SCOPE = 'replicate:scope';
const NAME = /^[A-Za-z_$][\w$]*$/;

function scopeCommonJS(file, name) {
  const proto = Module.prototype;
  const compile = proto._compile;
  proto._compile = function compileWithScope(content, filename) {
    if (filename !== file) return apply(compile, this, [content, filename]);
    proto._compile = compile;
    const more = `\n;module[Symbol.for('${SCOPE}')] = () => ${name};\n`;
    return apply(compile, this, [content + more, filename]);
  };
}

// Stdin read as it arrives: the job's line, then the rest (the nonce) once the host sends it.
function stdinReader() {
  const chunk = Buffer.alloc(1 << 16);
  let held = [];
  function more() {
    for (;;) {
      try {
        return readSync(0, chunk, 0, chunk.length, null);
      } catch (error) {
        if (error.code !== 'EAGAIN') throw error;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
    }
  }
  function line() {
    for (;;) {
      const last = held.length ? held[held.length - 1] : Buffer.alloc(0);
      const at = last.indexOf(10);
      if (at >= 0) {
        const text = Buffer.concat([...held.slice(0, -1), last.subarray(0, at)]).toString('utf8');
        held = [last.subarray(at + 1)];
        return text;
      }
      const n = more();
      if (n === 0) throw new Error('stdin ended before the job');
      held.push(Buffer.from(chunk.subarray(0, n)));
    }
  }
  function rest() {
    for (let n = more(); n > 0; n = more()) held.push(Buffer.from(chunk.subarray(0, n)));
    return Buffer.concat(held).toString('utf8');
  }
  return { line, rest };
}

async function load(file, scope, esm) {
  const href = url.pathToFileURL(file).href;
  if (scope === null || scope === undefined) return esm ? import(href) : require(file);
  if (!NAME.test(scope)) throw new TypeError(`not a name: ${scope}`);
  if (esm) {
    const hook = url.pathToFileURL(path.join(__dirname, 'scope.mjs')).href;
    const more = { [href]: `\n;export { ${scope} as "${SCOPE}" };\n` };
    Module.register(hook, { data: { more } });
    return (await import(href))[SCOPE];
  }
  scopeCommonJS(file, scope);
  require(file);
  return require.cache[file][Symbol.for(SCOPE)]();
}

function walk(root, names) {
  let at = root;
  for (const name of names) {
    if (at === null || at === undefined) throw new TypeError(`no export ${names.join('.')}`);
    at = at[name];
  }
  return at;
}

// The function to call and the classes an instance node is rebuilt on.
function resolve(exports, job) {
  const owner = walk(exports, job.export);
  const classes = { __proto__: null };
  if (job.kind === 'function') return { fn: owner, classes };
  if (typeof owner !== 'function') throw new TypeError(`${job.export.join('.')} is no class`);
  classes[owner.name] = owner;
  const fn = job.kind === 'static' ? owner[job.member] : owner.prototype[job.member];
  return { fn, classes };
}

// What a call did: {value} or {error}, a returned promise awaited ({promise: true}).
function settle(fn, input) {
  let value;
  try {
    value = apply(fn, input.self, input.args);
  } catch (error) {
    return Promise.resolve({ error });
  }
  if (!isPromise(value)) return Promise.resolve({ value });
  return new Promise((done) => {
    apply(promiseThen, value, [
      (v) => done({ value: v, promise: true }),
      (e) => done({ error: e, promise: true }),
    ]);
  });
}

async function callOne(fn, input, job, write) {
  write({ event: 'call', i: input.i });
  const settled = await settle(fn, input);
  let outcome;
  try {
    outcome = report(settled, input.args, job.kind === 'method' ? input.self : undefined, job);
  } catch (error) {
    outcome = { status: 'runner_error', msg: `the outcome could not be encoded: ${error}` };
  }
  write({ event: 'result', i: input.i, outcome });
}

function rebuild(job, classes) {
  return each(job.inputs, (input) => {
    try {
      const decode = decoder(classes);
      const args = each(input.args, decode);
      return { i: input.i, args, self: job.kind === 'method' ? decode(input.this) : undefined };
    } catch (error) {
      return { i: input.i, error: `${error.name}: ${error.message}` };
    }
  });
}

async function main() {
  const stdin = stdinReader();
  const job = parse(stdin.line());
  const esm = moduleFormat(job.module) === 'module';
  job.nonce = stdin.rest().trim();  // a warm jail waits here for its candidate
  const write = channel(job.channel_fd, job.nonce);
  process.on('unhandledRejection', () => {});
  write({ event: 'started' });
  let target;
  try {
    target = resolve(await load(job.module, job.scope, esm), job);
    if (typeof target.fn !== 'function') throw new TypeError(`${job.export.join('.')} is no function`);
  } catch (error) {
    const exc = thrown(error);
    write({ event: 'import_error', type: exc.type, msg: exc.msg });
    exit(0);
    return;
  }
  write({ event: 'ready' });
  const inputs = rebuild(job, target.classes);
  write({ event: 'loaded' });
  for (const input of inputs) {
    if (input.error !== undefined) {
      write({ event: 'result', i: input.i, outcome: { status: 'load_error', msg: input.error } });
    } else {
      await callOne(target.fn, input, job, write);
    }
  }
  write({ event: 'done' });
  exit(0);
}

main();
