'use strict';
// The runner's frames and one call's outcome in its form, shared by the runner (main.cjs) and
// the recorder (record.cjs): {status: "returned", value, args, this} or {status: "raised", exc: {type, msg},
// async, args, this}, `args` and `this` as they are now; a settled promise's value is
// {t: "promise", v: value}, its rejection raised with `async`: true. Node built-ins only.

const fs = require('node:fs');
const { encoder, thrown, append, hasOwn } = require('./values.cjs');

const writeSync = fs.writeSync;
const stringify = JSON.stringify;
const BufferFrom = Buffer.from;
const setProto = Object.setPrototypeOf;
const ownKeys = Object.keys;

// `frame` (the runner's own objects and arrays, made for it) with every prototype cut off, so
// JSON.stringify finds no `toJSON` a candidate put on Object.prototype or Array.prototype (it
// would replace the frame by a forged one).
function bare(v) {
  if (v === null || typeof v !== 'object') return v;
  setProto(v, null);
  const keys = ownKeys(v);
  for (let i = 0; i < keys.length; i += 1) bare(v[keys[i]]);
  return v;
}

// A writer of frames: each one `<nonce> <json>` line written to `fd` in one write.
function channel(fd, nonce) {
  return (frame) => {
    const bytes = BufferFrom(`${nonce} ${stringify(bare(frame))}\n`, 'utf8');
    let off = 0;
    while (off < bytes.length) {
      try {
        off += writeSync(fd, bytes, off, bytes.length - off);
      } catch (error) {
        if (error.code !== 'EAGAIN') throw error;
      }
    }
  };
}

function each(list, f) {
  const out = [];
  for (let i = 0; i < list.length; i += 1) append(out, f(list[i]));
  return out;
}

// `settled`: {value} or {error}, with `promise` when a returned promise settled so; `self` is
// undefined for a call whose `this` is not reported.
function report(settled, args, self, limits) {
  const encode = (v) => encoder(limits.max_depth, limits.max_items)(v);
  const after = each(args, encode);
  const that = self === undefined ? undefined : encode(self);
  if (hasOwn(settled, 'error')) {
    const exc = thrown(settled.error);
    return { status: 'raised', exc, async: hasOwn(settled, 'promise'), args: after, this: that };
  }
  const value = encode(settled.value);
  return {
    status: 'returned', value: hasOwn(settled, 'promise') ? { t: 'promise', v: value } : value,
    args: after, this: that,
  };
}

module.exports = { channel, each, report };
