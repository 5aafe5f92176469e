"""Small JavaScript and TypeScript sources for the adapter's unit tests."""

from __future__ import annotations

JS = """\
import { helper } from "./helper.js";

/**
 * Adds two numbers.
 */
export function add(a, b) {
  return a + b;
}

export default function defaulted(x) { return x * 2; }

const double = (x) => x * 2, triple = function (x) { return x * 3; };
let later = async (url) => {
  const r = await helper(url);
  return r;
};
var gen = function* (n) { yield n; };
function* counter(n) { for (let i = 0; i < n; i++) yield i; }
function empty() {}
function twice() { return 1; }
function twice() { return 2; }
exports.cjs = function (a) { return a; };
module.exports.moduleCjs = (a) => ({ a });
module.exports = function anonymous() { return 0; };

class Shape {
  constructor(w) { this.w = w; }
  static unit() { return new Shape(1); }
  get width() { return this.w; }
  set width(v) { this.w = v; }
  #secret() { return 1; }
  area() {
    return this.w * this.w;
  }
  async *frames() { yield this.w; }
}

function outer() {
  function inner() { return 1; }
  return inner();
}
"""

TS = """\
export abstract class Store<T> {
  @logged
  put(key: string, value: T): void {
    this.items.set(key, value);
  }
  abstract size(): number;
  get(key: string): T;
  get(key: string, fallback?: T): T | undefined {
    return this.items.get(key) ?? fallback;
  }
}

export function pick(a: number): number;
export function pick(a: string): string;
export function pick(a: any): any {
  return a;
}

export const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));
"""

JS_TARGETS = (
    "add",
    "defaulted",
    "double",
    "triple",
    "later",
    "gen",
    "counter",
    "cjs",
    "moduleCjs",
    "Shape.unit",
    "Shape.area",
    "Shape.frames",
    "outer",
)

TS_TARGETS = ("Store.put", "Store.get", "pick", "clamp")
