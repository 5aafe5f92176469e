'use strict';
// Preloaded (`--require`) for an ava repository's test files run as plain Node scripts: ava
// itself runs each file in a worker of its own, and refuses to be loaded outside it. A test
// file's `require('ava')` and `import test from 'ava'` both get `ava.cjs` instead, ava's API on
// node:test: `require` through Node's resolver, `import` through `shim_hook.mjs`. Node built-ins
// only.

const Module = require('node:module');
const path = require('node:path');
const url = require('node:url');

const shim = path.join(__dirname, 'ava.cjs');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolve(request, ...rest) {
  return request === 'ava' ? shim : Reflect.apply(resolveFilename, this, [request, ...rest]);
};
const shims = { ava: url.pathToFileURL(shim).href };
Module.register(url.pathToFileURL(path.join(__dirname, 'shim_hook.mjs')).href, {
  data: { shims },
});
