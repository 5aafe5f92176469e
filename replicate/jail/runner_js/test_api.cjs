'use strict';
// The test API jest and vitest share, made from node:test's: `describe`/`it`/`test` with their
// `.skip`, `.only`, `.todo` and `.each` over an array table (printf-style titles), and the four
// hooks; what a test body is handed (`call`) is the caller's: jest hands `done`, vitest a
// context. Used by jest_globals.cjs and vitest.mjs; Node built-ins only.

const util = require('node:util');

function title(name, row, index) {
  const text = String(name).replace(/\$#/g, String(index));
  return /%[sdifjopP#%]/.test(text) ? util.format(text, ...row) : text;
}

// `fn.each(table)(name, body)`: one test a row, its cells the body's arguments.
function eachOf(fn) {
  return (table) => (name, test, timeout) => {
    if (!Array.isArray(table)) throw new Error('.each over a tagged template is not supported');
    table.forEach((row, index) => {
      const cells = Array.isArray(row) ? row : [row];
      fn(title(name, cells, index), () => test(...cells), timeout);
    });
  };
}

// `it`/`test`/`describe` from node:test's `base`: a body (`call` makes what node:test runs of
// it) and a timeout in ms, or vitest's options object before the body.
function styled(base, call) {
  const made = (name, fn, timeout) => {
    if (fn !== null && typeof fn === 'object') [fn, timeout] = [timeout, fn.timeout];
    return base(String(name), typeof timeout === 'number' ? { timeout } : {}, call(fn, name));
  };
  made.skip = (name, fn) => base(String(name), { skip: true }, call(fn, name));
  made.only = (name, fn, timeout) => made(name, fn, timeout);
  made.todo = (name) => base(String(name), { todo: true }, () => {});
  made.concurrent = made;
  made.each = eachOf(made);
  made.skip.each = eachOf(made.skip);
  made.only.each = made.each;
  made.failing = made.skip;
  return made;
}

function hook(base, call) {
  return (fn, timeout) => base(call(fn, ''), typeof timeout === 'number' ? { timeout } : {});
}

function unsupported(what) {
  return () => {
    throw new Error(`${what} is not supported outside its runner`);
  };
}

module.exports = { eachOf, hook, styled, title, unsupported };
