'use strict';
// Widening: new inputs for a target, shaped like the calls recorded for it, generated with
// fast-check (pinned, installed into the cache, mounted read-only; the one package it loads, from
// the folder the job names). Run on its own in the jail (`node widen.cjs`), never by the runner,
// and it runs nothing of the repository: it reads tagged values and writes tagged values.
//
// The job (stdin): {nonce, channel_fd, fast_check (the package's folder), seed, count,
// max_depth, max_items, samples: [[node, ...], ...]} (each sample a recorded call's arguments,
// values.cjs's tags). Each argument position gets an arbitrary from the values seen there, kind
// by kind: a number any integer or double of a wider range and the edges (-0, NaN, +-Infinity,
// 0, -1, the extremes), a string of the seen strings' characters or any, longer than seen, an
// array of items like the seen items, longer; an object with the seen keys (those not always
// present optional), Map and Set likewise, booleans, BigInt and Date anywhere; what it cannot
// vary (a class instance, a function, a RegExp...) as seen. A call's arity is one seen. The
// frames: {event: "widened", i, args: [node]} for each distinct new call (none equal to a
// sample), then {event: "done"}. `fc.sample` with the seed: the same job, the same calls.

const fs = require('node:fs');
const { encoder, decoder } = require('./values.cjs');
const { channel } = require('./outcome.cjs');

let fc;

function loadTool(folder) {
  return require(folder);
}

const EDGES = [-0, NaN, Infinity, -Infinity, 0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_VALUE];
const GROWTH = 2;  // lengths and ranges up to this many times the largest seen, and more

function groups(nodes) {
  const byTag = new Map();
  for (const node of nodes) {
    if (node === null || typeof node !== 'object' || typeof node.t !== 'string') continue;
    if (!byTag.has(node.t)) byTag.set(node.t, []);
    byTag.get(node.t).push(node);
  }
  return byTag;
}

function numbers(nodes) {
  const seen = nodes.map((n) => Number(n.v));
  const finite = seen.filter((v) => Number.isFinite(v));
  const big = Math.max(10, ...finite.map((v) => Math.abs(v))) * GROWTH;
  const integral = finite.length > 0 && finite.every((v) => Number.isInteger(v));
  const wide = integral && big <= 2 ** 31
    ? fc.integer({ min: -Math.ceil(big), max: Math.ceil(big) })
    : fc.double({ min: -big, max: big });
  return fc.oneof({ arbitrary: wide, weight: 4 }, { arbitrary: fc.double(), weight: 1 },
    { arbitrary: fc.constantFrom(...EDGES), weight: 2 });
}

function strings(nodes) {
  const seen = nodes.map((n) => String(n.v));
  const longest = Math.max(0, ...seen.map((s) => s.length));
  const maxLength = longest * GROWTH + 8;
  const chars = [...new Set(seen.join(''))];
  const parts = [{ arbitrary: fc.string({ maxLength }), weight: 1 },
    { arbitrary: fc.fullUnicodeString({ maxLength }), weight: 1 }];
  if (chars.length > 0) {
    const like = fc.stringOf(fc.constantFrom(...chars), { maxLength });
    const grown = fc.tuple(fc.constantFrom(...seen), like).map(([s, more]) => s + more);
    parts.push({ arbitrary: like, weight: 3 }, { arbitrary: grown, weight: 2 });
  }
  return fc.oneof(...parts);
}

function arrays(nodes, depth) {
  const items = nodes.flatMap((n) => n.v.filter((item) => item.t !== 'hole'));
  const longest = Math.max(0, ...nodes.map((n) => n.v.length));
  const item = items.length > 0 ? shaped(items, depth + 1) : fc.constant(undefined);
  return fc.array(item, { maxLength: longest * GROWTH + 2 });
}

function objects(nodes, depth) {
  const byKey = new Map();
  for (const node of nodes) {
    for (const [key, value] of node.v) {
      if (!byKey.has(key)) byKey.set(key, []);
      byKey.get(key).push(value);
    }
  }
  const model = {};
  const requiredKeys = [];
  for (const [key, values] of byKey) {
    Object.defineProperty(model, key, {
      value: shaped(values, depth + 1), enumerable: true, writable: true, configurable: true,
    });
    if (nodes.every((n) => n.v.some(([k]) => k === key))) requiredKeys.push(key);
  }
  return fc.record(model, { requiredKeys });
}

function collections(tag, nodes, depth) {
  const longest = Math.max(0, ...nodes.map((n) => n.v.length));
  const options = { maxLength: longest * GROWTH + 2 };
  if (tag === 'set') {
    const items = nodes.flatMap((n) => n.v);
    const item = items.length > 0 ? shaped(items, depth + 1) : fc.constant(undefined);
    return fc.array(item, options).map((list) => new Set(list));
  }
  const pairs = nodes.flatMap((n) => n.v);
  if (pairs.length === 0) return fc.constant(null).map(() => new Map());
  const keys = shaped(pairs.map((p) => p[0]), depth + 1);
  const values = shaped(pairs.map((p) => p[1]), depth + 1);
  return fc.array(fc.tuple(keys, values), options).map((list) => new Map(list));
}

// The values seen, as they were: each use a fresh copy, decoded from its node.
function asSeen(nodes) {
  const usable = nodes.filter((n) => n.t !== 'ref' && n.t !== 'cut' && n.t !== 'getter');
  if (usable.length === 0) return fc.constant(undefined);
  return fc.constantFrom(...usable).map((node) => decoder({ __proto__: null })(node));
}

function kindArbitrary(tag, nodes, depth) {
  if (depth >= 8 && ['array', 'object', 'map', 'set'].includes(tag)) return asSeen(nodes);
  switch (tag) {
    case 'num': return numbers(nodes);
    case 'str': return strings(nodes);
    case 'bool': return fc.boolean();
    case 'undefined': return fc.constant(undefined);
    case 'null': return fc.constant(null);
    case 'bigint': return fc.bigInt();
    case 'date': return fc.date();
    case 'array': return arrays(nodes, depth);
    case 'object': return objects(nodes.filter((n) => n.null_proto !== true), depth);
    case 'map': case 'set': return collections(tag, nodes, depth);
    default: return asSeen(nodes);
  }
}

// An arbitrary of the values like `nodes` (one position's, or one container's items).
function shaped(nodes, depth) {
  const parts = [];
  for (const [tag, group] of groups(nodes)) {
    if (tag === 'object' && group.every((n) => n.null_proto === true)) parts.push(asSeen(group));
    else parts.push(kindArbitrary(tag, group, depth));
  }
  if (parts.length === 0) return fc.constant(undefined);
  return parts.length === 1 ? parts[0] : fc.oneof(...parts);
}

function callArbitrary(samples) {
  const byArity = new Map();
  for (const args of samples) {
    if (!byArity.has(args.length)) byArity.set(args.length, []);
    byArity.get(args.length).push(args);
  }
  const shapes = [];
  for (const [arity, calls] of byArity) {
    const positions = [];
    for (let i = 0; i < arity; i += 1) positions.push(shaped(calls.map((c) => c[i]), 0));
    shapes.push(fc.tuple(...positions));
  }
  return shapes.length === 1 ? shapes[0] : fc.oneof(...shapes);
}

// A sample's arguments as this side writes them (the host writes 1 as "1.0"), to compare.
function reencoded(args, encode) {
  try {
    return args.map((node) => encode(decoder({ __proto__: null })(node)));
  } catch {
    return args;
  }
}

function main() {
  const job = JSON.parse(fs.readFileSync(0, 'utf8'));
  const write = channel(job.channel_fd, job.nonce);
  fc = loadTool(job.fast_check);
  const encode = encoder(job.max_depth, job.max_items);
  const seen = new Set(job.samples.map((args) => JSON.stringify(reencoded(args, encode))));
  const generated = job.samples.length === 0
    ? []
    : fc.sample(callArbitrary(job.samples), { seed: job.seed, numRuns: job.count });
  let i = 0;
  for (const call of generated) {
    let args;
    try {
      args = call.map((v) => encode(v));
    } catch {
      continue;
    }
    const text = JSON.stringify(args);
    if (seen.has(text)) continue;
    seen.add(text);
    write({ event: 'widened', i, args });
    i += 1;
  }
  write({ event: 'done' });
}

main();
