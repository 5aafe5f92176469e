'use strict';
// Preloaded (`--require`) for a vitest repository's test files run as plain Node scripts: vitest
// itself runs a file through vite's module graph in a worker, which the recorder's `--require`
// never reaches. It registers `shim_hook.mjs`, which resolves the test file's `import ... from
// 'vitest'` to `vitest.mjs`: vitest's test API on node:test. Node built-ins only.

const Module = require('node:module');
const path = require('node:path');
const url = require('node:url');

const shims = { vitest: url.pathToFileURL(path.join(__dirname, 'vitest.mjs')).href };
Module.register(url.pathToFileURL(path.join(__dirname, 'shim_hook.mjs')).href, {
  data: { shims },
});
