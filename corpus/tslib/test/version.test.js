import test from 'node:test';
import assert from 'node:assert/strict';
import { bumpVersion, compareVersions, parseVersion } from '../src/version.ts';

test('parseVersion', () => {
  assert.deepEqual(parseVersion('1.2.3'), { major: 1, minor: 2, patch: 3, prerelease: [] });
  assert.deepEqual(parseVersion('v10.0.1-beta.2'), {
    major: 10,
    minor: 0,
    patch: 1,
    prerelease: ['beta', '2'],
  });
  assert.deepEqual(parseVersion(' 0.0.0-rc '), { major: 0, minor: 0, patch: 0, prerelease: ['rc'] });
  assert.throws(() => parseVersion('1.2'), SyntaxError);
  assert.throws(() => parseVersion('one.two.three'), SyntaxError);
});

test('compareVersions', () => {
  assert.equal(compareVersions('1.0.0', '1.0.0'), 0);
  assert.equal(compareVersions('1.0.0', '2.0.0'), -1);
  assert.equal(compareVersions('1.10.0', '1.9.0'), 1);
  assert.equal(compareVersions('1.0.1', '1.0.0'), 1);
  assert.equal(compareVersions('1.0.0-alpha', '1.0.0'), -1);
  assert.equal(compareVersions('1.0.0', '1.0.0-alpha'), 1);
  assert.equal(compareVersions('1.0.0-alpha', '1.0.0-alpha.1'), -1);
  assert.equal(compareVersions('1.0.0-alpha.1', '1.0.0-alpha.beta'), -1);
  assert.equal(compareVersions('1.0.0-beta.2', '1.0.0-beta.11'), -1);
  assert.equal(compareVersions('1.0.0-rc.1', '1.0.0-beta.11'), 1);
  assert.equal(compareVersions('v2.0.0', '2.0.0'), 0);
});

test('bumpVersion', () => {
  assert.equal(bumpVersion('1.2.3', 'patch'), '1.2.4');
  assert.equal(bumpVersion('1.2.3', 'minor'), '1.3.0');
  assert.equal(bumpVersion('1.2.3', 'major'), '2.0.0');
  assert.equal(bumpVersion('1.2.3-rc.1', 'patch'), '1.2.3');
  assert.equal(bumpVersion('v0.9.9', 'minor'), '0.10.0');
  assert.throws(() => bumpVersion('1', 'major'), SyntaxError);
});
