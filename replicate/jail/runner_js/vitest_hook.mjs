// The Node module hook vitest_globals.cjs registers: `vitest` (what a vitest test file imports
// its API from) resolves to vitest.mjs. Node built-ins only (none imported); it runs on Node's
// hooks thread.

let shim = null;

export async function initialize(data) {
  shim = data.shim;
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'vitest' && shim !== null) return { url: shim, shortCircuit: true };
  return nextResolve(specifier, context);
}
