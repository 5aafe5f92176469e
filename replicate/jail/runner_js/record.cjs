'use strict';
// The harvest's recorder: loaded with `node --require record.cjs` into a repository's own test
// process (one test file a process), it wraps each target function (of a CommonJS module or,
// a binding only, of an ES module through scope.mjs) and writes, for each distinct call the tests make, the arguments before the call and the outcome
// (the runner's, outcome.cjs: the arguments after, the value or thrown error) as one frame on
// the channel fd: `<nonce> {"event": "record", "target": key, "args": [node], "outcome": ...}`.
// Node built-ins only, shipped as source; intrinsics taken when it loads, before the tests run.
//
// Its job is the environment variable REPLICATE_RECORD (removed when read, so the tests do not
// see it): {nonce, channel_fd, per_file, max_depth, max_items, test_file (the file the process
// runs, absolute: a call made from it is `visible`), targets: [{key, module (an
// absolute path), export (property names from module.exports), scope (a module-scope binding
// instead, or null), kind ("function", "static" or "method": then `member`, the exported
// class's method)}]}. An export is replaced after the module ran; a binding through one line
// added after the module's last (no line of it moves): `try { name = wrap(name) } catch {}`, so
// the module's own calls to it are recorded too, and in a CommonJS module its export, if it is
// exported, replaced by the same wrapper. Each target records at most `per_file` distinct
// calls (arguments as encoded) in a process; a call is made the same whether it is recorded or
// not: the recorder's failures are swallowed, the target's own value or error passed through.

const Module = require('node:module');
const path = require('node:path');
const url = require('node:url');
const util = require('node:util');
const { encoder, answered, append } = require('./values.cjs');
const { channel, each, report } = require('./outcome.cjs');

const { isMainThread } = require('node:worker_threads');

const env = process.env;
const stringify = JSON.stringify;
const apply = Reflect.apply;
const isPromise = util.types.isPromise;
const isProxy = util.types.isProxy;
const getProto = Object.getPrototypeOf;
const ObjectProto = Object.prototype;
const objectKeys = Object.keys;
const getOwnDescriptor = Object.getOwnPropertyDescriptor;
const defineProperty = Object.defineProperty;
const MAX_SWAPPED = 16; // function-valued properties of one options object wrapped, at most
const promiseThen = Promise.prototype.then;
const ProxyCtor = Proxy;
const SetCtor = Set;
const setHas = Set.prototype.has;
const setAdd = Set.prototype.add;
const WRAP = Symbol.for('replicate:record');
const NAME = /^[A-Za-z_$][\w$]*$/;

let job;
let write;

// Whether the function that called the wrapper (`trap`, the Proxy's apply) is in the test file
// the process runs: a call the agent can read in the tests, as Python's recorder says of a call
// straight from a test; not one the library made while a test ran. Read off V8's structured
// stack, the tests' own `Error.prepareStackTrace` put back.
const captureStackTrace = Error.captureStackTrace;
function calledFromTest(trap) {
  const saved = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = (_, frames) => frames;
    const holder = {};
    captureStackTrace(holder, trap);
    const frames = holder.stack;
    const name = Array.isArray(frames) && frames.length > 0 ? frames[0].getFileName() : null;
    if (typeof name !== 'string') return false;
    return (name.startsWith('file:') ? url.fileURLToPath(name) : name) === job.test_file;
  } catch {
    return false;
  } finally {
    Error.prepareStackTrace = saved;
  }
}

// A proxy of `fn` recording its calls under `key`, with their `this` for a `method` (a
// non-function passes through unchanged).
function recording(key, fn, method = false) {
  if (typeof fn !== 'function') return fn;
  const seen = new SetCtor();
  const encode = (v) => encoder(job.max_depth, job.max_items)(v);
  function record(args, self, before, settled) {
    try {
      const outcome = report(settled, args, method ? self : undefined, job);
      const { visible } = before;
      write({ event: 'record', target: key, args: before.args, this: before.this, outcome, visible });
    } catch {
      // an outcome that cannot be encoded is not recorded
    }
  }
  function call(target, self, args) {
    let before;
    try {
      before = { args: each(args, encode), this: method ? encode(self) : undefined };
      const text = stringify(before);
      if (seen.size >= job.per_file || apply(setHas, seen, [text])) before = undefined;
      else {
        apply(setAdd, seen, [text]);
        before.visible = calledFromTest(call);
      }
    } catch {
      before = undefined;
    }
    if (before === undefined) return apply(target, self, args);
    const tables = [];
    const swapped = [];
    const passed = withAnswered(args, tables, swapped);
    const noted = () => withAnswers(before, tables);
    let value;
    try {
      value = apply(target, self, passed);
    } catch (error) {
      restore(swapped);
      record(passed, self, noted(), { error });
      throw error;
    }
    restore(swapped);
    if (!isPromise(value)) record(passed, self, noted(), { value });
    else {
      apply(promiseThen, value, [
        (v) => record(passed, self, noted(), { value: v, promise: true }),
        (e) => record(passed, self, noted(), { error: e, promise: true }),
      ]);
    }
    return value;
  }
  return new ProxyCtor(fn, { apply: call });
}

// A recorded call's arguments, each function among them wrapped to note what it answers
// (`answered`) into `tables` ([argument, property or null, notes]): what the replay's rebuilt
// function gives back (values.cjs's `answering`). At the top level a function is passed wrapped;
// in a plain object argument (an options bag: qs's `decoder`) a function-valued own data
// property is swapped for its wrapper during the call, noted in `swapped`, and put back by
// `restore` (the object itself is the caller's, the same one).
function withAnswered(args, tables, swapped) {
  const passed = [];
  for (let i = 0; i < args.length; i += 1) {
    let arg = args[i];
    if (typeof arg === 'function' && !isProxy(arg)) {
      const answers = [];
      append(tables, [i, null, answers]);
      arg = answered(arg, answers);
    } else if (isPlainObject(arg)) {
      swapIn(arg, i, tables, swapped);
    }
    append(passed, arg);
  }
  return passed;
}

function isPlainObject(value) {
  if (value === null || typeof value !== 'object' || isProxy(value)) return false;
  const proto = getProto(value);
  return proto === null || proto === ObjectProto;
}

function swapIn(object, i, tables, swapped) {
  const keys = objectKeys(object);
  for (let k = 0; k < keys.length && k < MAX_SWAPPED; k += 1) {
    const found = getOwnDescriptor(object, keys[k]);
    const fn = found && found.value;
    if (typeof fn !== 'function' || isProxy(fn) || !found.writable || !found.configurable) continue;
    const answers = [];
    const wrapper = answered(fn, answers);
    defineProperty(object, keys[k], { ...found, value: wrapper });
    append(tables, [i, keys[k], answers]);
    append(swapped, [object, keys[k], found, wrapper]);
  }
}

function restore(swapped) {
  for (const [object, key, found, wrapper] of swapped) {
    try {
      const now = getOwnDescriptor(object, key);
      if (now && now.value === wrapper) defineProperty(object, key, found);
    } catch {
      // a property the call made unconfigurable keeps what the call left
    }
  }
}

// `before` with each noted function argument's answers, where they are whole.
function withAnswers(before, tables) {
  if (tables.length === 0) return before;
  const args = [...before.args];
  for (const [i, key, answers] of tables) {
    if (answers.complete === false) continue;
    const node = args[i];
    if (key === null && node && node.t === 'function') {
      args[i] = { t: 'function', v: node.v, answers: [...answers] };
    } else if (key !== null && node && node.t === 'object') {
      const v = node.v.map(([k, item]) =>
        k === key && item.t === 'function' ? [k, { ...item, answers: [...answers] }] : [k, item]);
      args[i] = { ...node, v };
    }
  }
  return { ...before, args };
}

// An exported target wrapped where the module's exports hold it: the export itself, a static
// method of the exported class, or an instance method on its prototype.
function wrapExport(module, target) {
  const names = target.export;
  if (target.kind === 'function' && names.length === 0) {
    module.exports = recording(target.key, module.exports);
    return;
  }
  const path = target.kind === 'function' ? names.length - 1 : names.length;
  let owner = module.exports;
  for (let i = 0; i < path; i += 1) owner = owner == null ? owner : owner[names[i]];
  if (owner == null) return;
  if (target.kind === 'function') {
    owner[names[path]] = recording(target.key, owner[names[path]]);
    return;
  }
  if (typeof owner !== 'function') return;
  const holder = target.kind === 'method' ? owner.prototype : owner;
  const method = target.kind === 'method';
  if (holder != null) holder[target.member] = recording(target.key, holder[target.member], method);
}

// A wrapped binding's function the module also exported (as module.exports or one of its own
// properties, taken before the binding was wrapped) replaced there by the same proxy.
function exported(module, fn, proxy) {
  const exports = module.exports;
  if (exports === fn) {
    module.exports = proxy;
    return;
  }
  if (exports === null || (typeof exports !== 'object' && typeof exports !== 'function')) return;
  for (const name of Object.keys(exports)) {
    const d = Object.getOwnPropertyDescriptor(exports, name);
    if (d !== undefined && d.value === fn && d.writable) exports[name] = proxy;
  }
}

// The line that wraps each binding target of one file, reaching `recording` through `owner`;
// in an ES module (`classes`), a method of a class exported under its own binding's name too,
// on the class (whose bindings the module's importers share), as `wrapExport` does in CommonJS.
function bindings(targets, owner, classes = false) {
  const record = `${owner}[Symbol.for('replicate:record')]`;
  let more = '';
  for (const target of targets) {
    const key = stringify(target.key);
    if (target.scope !== null) {
      more += `try { ${target.scope} = ${record}(${key}, ${target.scope}); } catch {} `;
    } else if (classes && target.kind !== 'function' && target.export.length === 1) {
      const [name] = target.export;
      if (name === 'default' || !NAME.test(name) || !NAME.test(target.member)) continue;
      const method = target.kind === 'method';
      const holder = method ? `${name}.prototype` : name;
      const member = `${holder}.${target.member}`;
      more += `try { ${member} = ${record}(${key}, ${member}, ${method}); } catch {} `;
    }
  }
  return more;
}

// Started in the main thread only: Node loads `--require`d files in its hooks thread as well.
function start() {
  job = JSON.parse(env.REPLICATE_RECORD);
  delete env.REPLICATE_RECORD;
  write = channel(job.channel_fd, job.nonce);
  const byFile = { __proto__: null };
  for (const target of job.targets) {
    if (target.scope !== null && !NAME.test(target.scope)) continue;
    (byFile[target.module] ||= []).push(target);
  }

  const proto = Module.prototype;
  const compile = proto._compile;
  proto._compile = function compileRecorded(content, filename) {
    const targets = byFile[filename];
    if (targets === undefined) return apply(compile, this, [content, filename]);
    const more = bindings(targets, 'module');
    const wrapped = [];
    this[WRAP] = (key, fn) => {
      const proxy = recording(key, fn);
      if (proxy !== fn) wrapped.push([fn, proxy]);
      return proxy;
    };
    const result = apply(compile, this, [more ? `${content}\n;${more}\n` : content, filename]);
    for (const target of targets) if (target.scope === null) wrapExport(this, target);
    for (const [fn, proxy] of wrapped) exported(this, fn, proxy);
    return result;
  };

  // ES modules: their binding targets and exported classes' methods wrapped by the line scope.mjs
  // appends, through a global the recorder defines (not writable); another export without a
  // binding named (`export const f = ...`) is not recorded there.
  Object.defineProperty(globalThis, WRAP, { value: recording });
  const more = { __proto__: null };
  for (const file of Object.keys(byFile)) {
    const line = bindings(byFile[file], 'globalThis', true);
    if (line) more[url.pathToFileURL(file).href] = `\n;${line}\n`;
  }
  if (Object.keys(more).length > 0) {
    const hook = url.pathToFileURL(path.join(__dirname, 'scope.mjs')).href;
    Module.register(hook, { data: { more: { ...more } } });
  }
}

if (isMainThread && env.REPLICATE_RECORD !== undefined) start();
