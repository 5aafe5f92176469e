'use strict';
// ava's API for an ava test file run as a plain Node script (ava_globals.cjs hands it to the
// file's `require('ava')` or `import test from 'ava'`): `test(title, implementation, ...args)`
// on node:test, a macro's extra arguments passed on, `.serial`, `.skip`, `.only`, `.todo`,
// `.failing` (skipped) and the hooks (`t.context` shared from `beforeEach` to the test), `test.cb`
// with `t.end`; the assertions on node:assert, `t.throws` with ava's expectation object
// ({instanceOf, message, name, code, is}). Not given: `t.snapshot` and `t.try`, which throw.
// Node built-ins and its own files only.

const nt = require('node:test');
const assert = require('node:assert');
const util = require('node:util');
const { unsupported } = require('./test_api.cjs');

function matches(error, expected) {
  if (expected === undefined || expected === null) return;
  if (typeof expected === 'function') return assert.ok(error instanceof expected);
  const { instanceOf, message, name, code, is } = expected;
  if (is !== undefined) assert.strictEqual(error, is);
  if (instanceOf !== undefined) assert.ok(error instanceof instanceOf, `not a ${instanceOf.name}`);
  if (name !== undefined) assert.strictEqual(error.name, name);
  if (code !== undefined) assert.strictEqual(error.code, code);
  if (typeof message === 'string') assert.strictEqual(error.message, message);
  if (message instanceof RegExp) assert.match(error.message, message);
  if (typeof message === 'function') assert.ok(message(error.message));
}

function like(actual, selector, message) {
  if (selector === null || typeof selector !== 'object' || Array.isArray(selector)) {
    return assert.deepStrictEqual(actual, selector, message);
  }
  for (const key of Object.keys(selector)) like(actual?.[key], selector[key], message);
}

function thrown(fn) {
  try {
    fn();
  } catch (error) {
    return { error };
  }
  return null;
}

function assertions(title, context, after) {
  const inspect = (value) => util.inspect(value, { depth: 4 });
  return {
    title,
    context,
    pass() {},
    fail: (message) => assert.fail(message ?? 'Test failed via `t.fail()`'),
    is: (a, b, message) => assert.ok(Object.is(a, b), message ?? `${inspect(a)} is not ${inspect(b)}`),
    not: (a, b, message) => assert.ok(!Object.is(a, b), message ?? `${inspect(a)} is ${inspect(b)}`),
    deepEqual: (a, b, message) => assert.deepStrictEqual(a, b, message),
    notDeepEqual: (a, b, message) => assert.notDeepStrictEqual(a, b, message),
    like,
    true: (value, message) => assert.strictEqual(value, true, message),
    false: (value, message) => assert.strictEqual(value, false, message),
    truthy: (value, message) => assert.ok(value, message),
    falsy: (value, message) => assert.ok(!value, message),
    assert: (value, message) => assert.ok(value, message),
    regex: (text, pattern, message) => assert.match(text, pattern, message),
    notRegex: (text, pattern, message) => assert.doesNotMatch(text, pattern, message),
    throws(fn, expected, message) {
      const caught = thrown(fn);
      assert.ok(caught !== null, message ?? 'Function did not throw');
      matches(caught.error, expected);
      return caught.error;
    },
    async throwsAsync(thrower, expected, message) {
      try {
        await (typeof thrower === 'function' ? thrower() : thrower);
      } catch (error) {
        matches(error, expected);
        return error;
      }
      return assert.fail(message ?? 'Promise did not reject');
    },
    notThrows: (fn) => void fn(),
    notThrowsAsync: async (thrower) => void (await (typeof thrower === 'function' ? thrower() : thrower)),
    plan() {},
    timeout() {},
    log() {},
    teardown: (fn) => after(fn),
    snapshot: unsupported('t.snapshot'),
    try: unsupported('t.try'),
  };
}

// node:test's context of a test -> its ava `t`, made by whichever of a hook and the test is first
const made = new WeakMap();
function avaOf(node, title) {
  if (!made.has(node)) made.set(node, assertions(title, {}, (fn) => node.after?.(fn)));
  return made.get(node);
}

function implementation(fn, args, title, callback = false) {
  if (typeof fn !== 'function') fn = fn && fn.exec;
  return (node) => {
    const t = avaOf(node, title);
    if (!callback) return fn(t, ...args);
    return new Promise((resolve, reject) => {
      t.end = (error) => (error ? reject(error) : resolve());
      fn(t, ...args);
    });
  };
}

function declare(options, callback = false) {
  return (title, fn, ...args) => {
    if (typeof title !== 'string') [title, fn, args] = ['', title, [fn, ...args]];
    const name = fn && typeof fn.title === 'function' ? fn.title(title, ...args) : title;
    return nt.test(name, options, implementation(fn, args, name, callback));
  };
}

function hook(base) {
  return (title, fn, ...args) => {
    if (typeof title !== 'string') [fn, args] = [title, [fn, ...args]];
    return base(implementation(fn, args, ''));
  };
}

const test = declare({});
test.serial = test;
test.only = test;
test.skip = declare({ skip: true });
test.failing = test.skip;
test.todo = (title) => nt.test(String(title), { todo: true }, () => {});
test.cb = declare({}, true);
test.serial.cb = test.cb;
test.before = (fn) => nt.before(() => fn(assertions('before', {}, nt.after)));
test.after = (fn) => nt.after(() => fn(assertions('after', {}, nt.after)));
test.after.always = test.after;
test.beforeEach = hook(nt.beforeEach);
test.afterEach = hook(nt.afterEach);
test.afterEach.always = test.afterEach;
test.serial.beforeEach = test.beforeEach;
test.macro = (macro) => macro;
test.default = test;

module.exports = test;
