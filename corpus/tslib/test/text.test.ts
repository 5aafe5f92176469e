import test from 'node:test';
import assert from 'node:assert/strict';
import { slugify, titleCase, truncate } from '../src/text.js';

test('slugify', () => {
  assert.equal(slugify('Hello, World!'), 'hello-world');
  assert.equal(slugify('  Crème brûlée  recipes '), 'creme-brulee-recipes');
  assert.equal(slugify('TypeScript 5.4 released', '_'), 'typescript_5_4_released');
  assert.equal(slugify('---'), '');
  assert.equal(slugify('naïve café', '.'), 'naive.cafe');
  assert.equal(slugify('already-a-slug'), 'already-a-slug');
});

test('titleCase', () => {
  assert.equal(titleCase('the lord of the rings'), 'The Lord of the Rings');
  assert.equal(titleCase('a tale OF two cities'), 'A Tale of Two Cities');
  assert.equal(titleCase('  war and peace '), 'War and Peace');
  assert.equal(titleCase('of'), 'Of');
  assert.equal(titleCase('what it is for'), 'What It Is For');
});

test('truncate', () => {
  assert.equal(truncate('short', 10), 'short');
  assert.equal(truncate('the quick brown fox', 12), 'the quick…');
  assert.equal(truncate('abcdefghijkl', 6), 'abcde…');
  assert.equal(truncate('the quick brown fox', 12, '...'), 'the quick...');
  assert.equal(truncate('exactly ten', 11), 'exactly ten');
  assert.equal(truncate('a b', 1), '…');
  assert.throws(() => truncate('anything', 2, '...'), RangeError);
});
