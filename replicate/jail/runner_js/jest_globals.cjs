'use strict';
// jest's globals for a jest test file run as a plain Node script (`node --require record.cjs
// --require jest_globals.cjs FILE`), so that the recorder sees the calls the file makes: jest
// itself runs a file in its own module registry inside a vm context, which no `--require`
// reaches. The suites run on node:test (describe, it and test, their `.skip`, `.only`, `.todo`
// and `.each` over an array table, the four hooks, a `done` callback); `expect` is jest's own
// (the `expect` package, installed with jest) and `jest.fn`/`jest.spyOn` jest-mock's. Not
// given: `jest.mock` of a module, fake timers and snapshots, which throw when called, and
// `.each` over a tagged template. Node built-ins only, besides the two packages jest ships,
// found on NODE_PATH among the repository's installed dependencies.

const nt = require('node:test');
const util = require('node:util');

// One of the packages jest ships, from the repository's installed dependencies (NODE_PATH).
function loadInstalled(name) {
  try {
    return require(name);
  } catch {
    return null;
  }
}

const expectPackage = loadInstalled('expect');
const expect = expectPackage && (expectPackage.expect || expectPackage.default || expectPackage);
const mockPackage = loadInstalled('jest-mock');

// A jest test body takes `done` as its one parameter; node:test hands a test its context first.
function body(fn) {
  if (typeof fn !== 'function' || fn.length === 0) return fn;
  return () =>
    new Promise((resolve, reject) => {
      const done = (error) => (error ? reject(error) : resolve());
      done.fail = (error) => reject(error instanceof Error ? error : new Error(String(error)));
      try {
        const result = fn(done);
        if (result && typeof result.then === 'function') result.then(resolve, reject);
      } catch (error) {
        reject(error);
      }
    });
}

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

// jest's `it`/`test`/`describe` made from node:test's: a body and a timeout in ms.
function jestStyle(base) {
  const made = (name, fn, timeout) =>
    base(String(name), typeof timeout === 'number' ? { timeout } : {}, body(fn));
  made.skip = (name, fn) => base(String(name), { skip: true }, body(fn));
  made.only = (name, fn, timeout) => made(name, fn, timeout);
  made.todo = (name) => base(String(name), { todo: true }, () => {});
  made.concurrent = made;
  made.each = eachOf(made);
  made.skip.each = eachOf(made.skip);
  made.only.each = made.each;
  made.failing = made.skip;
  return made;
}

function unsupported(what) {
  return () => {
    throw new Error(`${what} is not supported outside jest`);
  };
}

function jestObject() {
  const mocker = mockPackage && new mockPackage.ModuleMocker(globalThis);
  const missing = unsupported('jest-mock');
  const jest = {
    fn: mocker ? mocker.fn.bind(mocker) : missing,
    spyOn: mocker ? mocker.spyOn.bind(mocker) : missing,
    isMockFunction: mocker ? mocker.isMockFunction.bind(mocker) : () => false,
    clearAllMocks: mocker ? () => (mocker.clearAllMocks(), jest) : missing,
    resetAllMocks: mocker ? () => (mocker.resetAllMocks(), jest) : missing,
    restoreAllMocks: mocker ? () => (mocker.restoreAllMocks(), jest) : missing,
    setTimeout: () => jest,
  };
  const absent = ['mock', 'doMock', 'unmock', 'requireActual', 'useFakeTimers', 'runAllTimers'];
  for (const name of [...absent, 'advanceTimersByTime']) jest[name] = unsupported(`jest.${name}`);
  return jest;
}

function hook(base) {
  return (fn, timeout) => base(body(fn), typeof timeout === 'number' ? { timeout } : {});
}

function install() {
  const it = jestStyle(nt.it);
  const describe = jestStyle(nt.describe);
  const globals = {
    describe,
    it,
    test: it,
    xit: it.skip,
    xtest: it.skip,
    fit: it.only,
    xdescribe: describe.skip,
    fdescribe: describe.only,
    beforeAll: hook(nt.before),
    afterAll: hook(nt.after),
    beforeEach: hook(nt.beforeEach),
    afterEach: hook(nt.afterEach),
    jest: jestObject(),
  };
  if (expect) globals.expect = expect;
  for (const [name, value] of Object.entries(globals)) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  }
}

install();
