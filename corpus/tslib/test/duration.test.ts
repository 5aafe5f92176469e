import test from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from '../src/duration.js';

test('parseDuration reads units and sums them', () => {
  assert.equal(parseDuration('100ms'), 100);
  assert.equal(parseDuration('1s'), 1000);
  assert.equal(parseDuration('2m'), 120_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1h 30m'), 5_400_000);
  assert.equal(parseDuration('  2d 4h '), 187_200_000);
  assert.equal(parseDuration('1w'), 604_800_000);
  assert.equal(parseDuration('1.5h'), 5_400_000);
  assert.equal(parseDuration('-90s'), -90_000);
});

test('parseDuration refuses what is not a duration', () => {
  assert.throws(() => parseDuration(''), RangeError);
  assert.throws(() => parseDuration('   '), RangeError);
  assert.throws(() => parseDuration('ten minutes'), SyntaxError);
  assert.throws(() => parseDuration('5'), SyntaxError);
  assert.throws(() => parseDuration('5x'), SyntaxError);
  assert.throws(() => parseDuration('1h and 2m'), SyntaxError);
});

test('formatDuration keeps the largest units', () => {
  assert.equal(formatDuration(0), '0ms');
  assert.equal(formatDuration(999), '999ms');
  assert.equal(formatDuration(1000), '1s');
  assert.equal(formatDuration(5_400_000), '1h 30m');
  assert.equal(formatDuration(5_400_000, 1), '1h');
  assert.equal(formatDuration(187_200_000 + 61_000, 4), '2d 4h 1m 1s');
  assert.equal(formatDuration(-90_000), '-1m 30s');
  assert.equal(formatDuration(1_209_600_000), '2w');
  assert.equal(formatDuration(1500.6), '1s 501ms');
  assert.throws(() => formatDuration(Infinity), RangeError);
  assert.throws(() => formatDuration(NaN), RangeError);
});

test('a formatted duration parses back', () => {
  for (const ms of [1, 1000, 61_000, 3_600_000, 90_061_001]) {
    assert.equal(parseDuration(formatDuration(ms, 6)), ms);
  }
});
