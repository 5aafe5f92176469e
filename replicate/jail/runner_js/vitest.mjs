// What a vitest test file run as a plain Node script gets for `import ... from 'vitest'`
// (shim_hook.mjs resolves it here): describe, it and test on node:test (`test_api.cjs`: their
// `.skip`, `.only`, `.todo` and `.each` over an array table, the four hooks), a test body handed
// vitest's context ({ expect, task, skip }); `expect` made as vitest makes it, chai with
// @vitest/expect's plugins, and `vi.fn`/`vi.spyOn` from @vitest/spy: the packages vitest ships,
// from the repository's installed dependencies, loaded only in `loadInstalled`. Not given:
// `vi.mock` (vitest hoists it by transforming the file), fake timers and snapshots, which throw
// when called.

import nt from 'node:test';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { hook, styled, unsupported } = require('./test_api.cjs');

// A package vitest ships, from the repository's installed dependencies (the jail's /node_modules).
async function loadInstalled(name) {
  return import(name);
}

const chai = await loadInstalled('chai');
const plugins = await loadInstalled('@vitest/expect');
const spies = await loadInstalled('@vitest/spy');

chai.use(plugins.JestExtend);
chai.use(plugins.JestChaiExpect);
chai.use(plugins.JestAsymmetricMatchers);

function makeExpect() {
  const made = (value, message) => {
    const { assertionCalls } = plugins.getState(made);
    plugins.setState({ assertionCalls: assertionCalls + 1 }, made);
    return chai.expect(value, message);
  };
  Object.assign(made, chai.expect);
  Object.assign(made, globalThis[plugins.ASYMMETRIC_MATCHERS_OBJECT]);
  plugins.setState({ assertionCalls: 0, isExpectingAssertions: false }, made);
  made.getState = () => plugins.getState(made);
  made.setState = (state) => plugins.setState(state, made);
  made.extend = (matchers) => chai.expect.extend(made, matchers);
  made.soft = (value, message) => made(value, message);
  made.unreachable = (message) => chai.assert.fail(`expected ${message ?? ''} not to be reached`);
  return made;
}

export const expect = makeExpect();
globalThis[plugins.GLOBAL_EXPECT] = expect;

// A vitest test body is handed its context, where node:test hands its own.
function withContext(fn, name) {
  if (typeof fn !== 'function') return fn;
  return () => fn({ expect, task: { name: String(name) }, skip: unsupported('context.skip') });
}

export const it = styled(nt.it, withContext);
export const test = it;
export const describe = styled(nt.describe, (fn) => fn);
export const suite = describe;
export const beforeAll = hook(nt.before, withContext);
export const afterAll = hook(nt.after, withContext);
export const beforeEach = hook(nt.beforeEach, withContext);
export const afterEach = hook(nt.afterEach, withContext);
export const assert = chai.assert;
export const vi = {
  fn: spies.fn,
  spyOn: spies.spyOn,
  isMockFunction: spies.isMockFunction,
  clearAllMocks: () => (spies.mocks.forEach((m) => m.mockClear()), vi),
  resetAllMocks: () => (spies.mocks.forEach((m) => m.mockReset()), vi),
  restoreAllMocks: () => (spies.mocks.forEach((m) => m.mockRestore()), vi),
  mock: unsupported('vi.mock'),
  doMock: unsupported('vi.doMock'),
  useFakeTimers: unsupported('vi.useFakeTimers'),
};
export const vitest = vi;
