import test from 'node:test';
import assert from 'node:assert/strict';
import { BoundedCache } from '../src/cache.js';

test('a bounded cache evicts the least recently used key', () => {
  const cache = new BoundedCache<number>(2);
  assert.equal(cache.set('a', 1), undefined);
  assert.equal(cache.set('b', 2), undefined);
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.set('c', 3), 'b');
  assert.deepEqual(cache.keys(), ['a', 'c']);
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.set('a', 10), undefined);
  assert.deepEqual(cache.keys(), ['c', 'a']);
  assert.equal(cache.size, 2);
  assert.equal(cache.hitRate(), 0.5);
});

test('hit rate and capacity', () => {
  const cache = new BoundedCache<string>(3);
  assert.equal(cache.hitRate(), 0);
  for (const key of ['x', 'y', 'z', 'w']) {
    cache.set(key, key.toUpperCase());
  }
  assert.equal(cache.get('x'), undefined);
  assert.equal(cache.get('w'), 'W');
  assert.equal(cache.get('y'), 'Y');
  assert.equal(cache.get('z'), 'Z');
  assert.equal(cache.hitRate(), 0.75);
  assert.deepEqual(cache.keys(), ['w', 'y', 'z']);
  assert.throws(() => new BoundedCache(0), RangeError);
  assert.throws(() => new BoundedCache(1.5), RangeError);
});
