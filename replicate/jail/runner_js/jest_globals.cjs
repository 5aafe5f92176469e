'use strict';
// jest's globals for a jest test file run as a plain Node script (`node --require record.cjs
// --require jest_globals.cjs FILE`), so that the recorder sees the calls the file makes: jest
// itself runs a file in its own module registry inside a vm context, which no `--require`
// reaches. The suites run on node:test (`test_api.cjs`: describe, it and test, their `.skip`,
// `.only`, `.todo` and `.each` over an array table, the four hooks) with a `done` callback;
// `expect` is jest's own (the `expect` package, installed with jest) and `jest.fn`/`jest.spyOn`
// jest-mock's. Not given: `jest.mock` of a module, fake timers and snapshots, which throw when
// called. Node built-ins and its own files only, besides the two packages jest ships, found on
// NODE_PATH among the repository's installed dependencies.

const nt = require('node:test');
const { hook, styled, unsupported } = require('./test_api.cjs');

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
function withDone(fn) {
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

function install() {
  const it = styled(nt.it, withDone);
  const describe = styled(nt.describe, (fn) => fn);
  const globals = {
    describe,
    it,
    test: it,
    xit: it.skip,
    xtest: it.skip,
    fit: it.only,
    xdescribe: describe.skip,
    fdescribe: describe.only,
    beforeAll: hook(nt.before, withDone),
    afterAll: hook(nt.after, withDone),
    beforeEach: hook(nt.beforeEach, withDone),
    afterEach: hook(nt.afterEach, withDone),
    jest: jestObject(),
  };
  if (expect) globals.expect = expect;
  for (const [name, value] of Object.entries(globals)) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
  }
}

install();
