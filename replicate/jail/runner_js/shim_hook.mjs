// The Node module hook the runners' preloads register (vitest_globals.cjs, ava_globals.cjs): a
// test file's import of its runner (`vitest`, `ava`) resolves to our module giving that runner's
// API on node:test (`shims`: specifier to URL). Node built-ins only (none imported); it runs on
// Node's hooks thread.

let shims = { __proto__: null };

export async function initialize(data) {
  shims = data.shims;
}

export async function resolve(specifier, context, nextResolve) {
  if (Object.hasOwn(shims, specifier)) return { url: shims[specifier], shortCircuit: true };
  return nextResolve(specifier, context);
}
