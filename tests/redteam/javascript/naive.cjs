'use strict';
// A naive in-process grader for JavaScript, built the way public graders are, as the positive
// control of every JavaScript attack (an attack that would not fool it tests nothing):
// - the candidate's module is required into the process that holds the expected values, and
//   called directly;
// - a value is compared in the process, by its own methods: Object.is, `==`, JSON.stringify,
//   then `instanceof` with getTime / length and every item for a Date or an Array (a Map or a
//   Set: `instanceof`, size and every entry, first);
// - each case prints PASS or FAIL as it goes; the trusted side (test_javascript_cheats.py
//   `naive_reward`) believes exit code 0, else counts the FAIL lines it saw.
// Usage: node naive.cjs FILE EXPORT CASES_JSON  (a case: {args: [node], want: node | null},
// null: the call must throw; nodes in the runner's tagged form, simple ones only).
const fs = require('node:fs');

const [file, name, casesFile] = process.argv.slice(2);
const cases = JSON.parse(fs.readFileSync(casesFile, 'utf8'));

function decode(n) {
  switch (n.t) {
    case 'num': return Number(n.v);
    case 'str': return n.v;
    case 'bool': return n.v;
    case 'null': return null;
    case 'undefined': return undefined;
    case 'array': return n.v.map(decode);
    case 'date': return new Date(Number(n.v));
    case 'map': return new Map(n.v.map(([k, v]) => [decode(k), decode(v)]));
    case 'set': return new Set(n.v.map(decode));
    default: throw new Error(`not decoded here: ${n.t}`);
  }
}

function same(got, want) {
  if (want instanceof Map) {
    return got instanceof Map && got.size === want.size && [...want].every(([k, v]) => Object.is(got.get(k), v));
  }
  if (want instanceof Set) return got instanceof Set && got.size === want.size && [...want].every((k) => got.has(k));
  if (Object.is(got, want) || JSON.stringify(got) === JSON.stringify(want)) return true;
  if (want instanceof Date) return got instanceof Date && got.getTime() === want.getTime();
  if (Array.isArray(want)) {
    return got instanceof Array && got.length === want.length && want.every((w, k) => same(got[k], w));
  }
  return got == want; // eslint-disable-line eqeqeq
}

const fn = require(file)[name];
let fails = 0;
cases.forEach((c, i) => {
  let got;
  let threw = false;
  try {
    got = fn(...c.args.map(decode));
  } catch {
    threw = true;
  }
  const ok = threw ? c.want === null : c.want !== null && same(got, decode(c.want));
  if (!ok) fails += 1;
  process.stdout.write(`${ok ? 'PASS' : 'FAIL'} ${i}\n`);
});
process.exitCode = fails ? 1 : 0;
