'use strict';
// The tagged values of the Node runner: a JavaScript value to JSON and back, read without
// running the value's own code (no getter, valueOf, toString or Proxy trap is ever called).
// Node built-ins only. Every intrinsic used here is captured when this file loads, before any
// code of the repository runs, so a patched prototype later changes nothing here.
//
// Tags (`t`): undefined, null, bool, num (`v`: "NaN", "-0", "Infinity", "-Infinity" or the
// shortest round-trip decimal), bigint (`v`: decimal), str, symbol (`v`: description or null),
// function (`v`: its own name), array (`v`: items, a hole as {t: "hole"}), object (`v`:
// [key, node] pairs of own enumerable string keys; `null_proto`), instance (`class`, `v`),
// error (`class`, `message`, `v`), map (`v`: [key, value] pairs), set, date (`v`: a num text),
// regexp (`source`, `flags`, `last_index`), typed (`kind`, `v`: num or bigint texts), buffer
// (`v`: base64), getter (an accessor, never called), opaque (`v`: Proxy, Promise, WeakMap...),
// ref (`v`: how many levels up the container it repeats is: a cycle), cut (`v`: depth or size).

const util = require('node:util');

// util.types' functions, each taken now: the object is the repository's to change later
const types = { __proto__: null };
for (const name of Object.keys(util.types)) types[name] = util.types[name];
const ObjectProto = Object.prototype;
const getProto = Object.getPrototypeOf;
const desc = Object.getOwnPropertyDescriptor;
const defineProperty = Object.defineProperty;
const create = Object.create;
const ownKeys = Reflect.ownKeys;
const apply = Reflect.apply;
const is = Object.is;
const hasOwn = Object.hasOwn;
const isArray = Array.isArray;
const NumberCtor = Number;
const BigIntCtor = BigInt;
const SymbolCtor = Symbol;
const DateCtor = Date;
const RegExpCtor = RegExp;
const MapCtor = Map;
const SetCtor = Set;
const ArrayCtor = Array;
const StringCtor = String;
const ErrorCtor = Error;
const setProto = Object.setPrototypeOf;
const BufferFrom = Buffer.from;
const numberText = Number.prototype.toString;
const bigintText = BigInt.prototype.toString;
const bufferText = Buffer.prototype.toString;
const symbolDescription = desc(Symbol.prototype, 'description').get;
const dateTime = Date.prototype.getTime;
const regexpSource = desc(RegExp.prototype, 'source').get;
const regexpFlags = desc(RegExp.prototype, 'flags').get;
const mapEntries = Map.prototype.entries;
const mapSet = Map.prototype.set;
const mapGet = Map.prototype.get;
const construct = Reflect.construct;
const stringify = JSON.stringify;
const setValues = Set.prototype.values;
const setAdd = Set.prototype.add;
const mapNext = getProto(new Map().entries()).next;
const setNext = getProto(new Set().values()).next;
const typedProto = getProto(Uint8Array.prototype);
const typedTag = desc(typedProto, Symbol.toStringTag).get;
const typedLength = desc(typedProto, 'length').get;
const TYPED = {
  __proto__: null,
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array,
  Float32Array, Float64Array, BigInt64Array, BigUint64Array,
};
const ERRORS = {
  __proto__: null,
  Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError,
};
const OPAQUE = [
  ['Promise', types.isPromise], ['WeakMap', types.isWeakMap], ['WeakSet', types.isWeakSet],
  ['DataView', types.isDataView], ['SharedArrayBuffer', types.isSharedArrayBuffer],
  ['BoxedPrimitive', types.isBoxedPrimitive], ['Generator', types.isGeneratorObject],
  ['Iterator', (v) => types.isMapIterator(v) || types.isSetIterator(v)],
];

function ownData(object, key) {
  const d = desc(object, key);
  return d !== undefined && hasOwn(d, 'value') ? d.value : undefined;
}

// `list` with `item` added at its end by definition: no setter the repository put on
// Array.prototype or Object.prototype sees it (as an assignment past the end would call one).
function append(list, item) {
  defineProperty(list, list.length, {
    __proto__: null, value: item, writable: true, enumerable: true, configurable: true,
  });
  return list;
}

function numText(v) {
  if (v !== v) return 'NaN';
  if (v === 0) return is(v, -0) ? '-0' : '0';
  if (v === Infinity) return 'Infinity';
  if (v === -Infinity) return '-Infinity';
  return apply(numberText, v, []);
}

function className(proto) {
  const ctor = ownData(proto, 'constructor');
  const name = typeof ctor === 'function' ? ownData(ctor, 'name') : undefined;
  return typeof name === 'string' ? name : '';
}

// The name and message of a thrown value: its class and own `message` for an object.
function thrown(value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) {
    return { type: value === null ? 'null' : typeof value, msg: '' };
  }
  if (types.isProxy(value)) return { type: 'Proxy', msg: '' };
  const proto = getProto(value);
  const message = ownData(value, 'message');
  return { type: proto === null ? '' : className(proto), msg: typeof message === 'string' ? message : '' };
}

function encoder(maxDepth, maxItems) {
  const path = [];
  let budget = maxItems;

  function encode(v, depth) {
    budget -= 1;
    if (budget < 0) return { t: 'cut', v: 'size' };
    switch (typeof v) {
      case 'undefined': return { t: 'undefined' };
      case 'boolean': return { t: 'bool', v };
      case 'number': return { t: 'num', v: numText(v) };
      case 'bigint': return { t: 'bigint', v: apply(bigintText, v, []) };
      case 'string': return { t: 'str', v };
      case 'symbol': {
        const d = apply(symbolDescription, v, []);
        return { t: 'symbol', v: d === undefined ? null : d };
      }
      case 'function': {
        const name = types.isProxy(v) ? undefined : ownData(v, 'name');
        return { t: 'function', v: typeof name === 'string' ? name : '' };
      }
      default: break;
    }
    if (v === null) return { t: 'null' };
    if (types.isProxy(v)) return { t: 'opaque', v: 'Proxy' };
    for (let i = path.length - 1; i >= 0; i -= 1) {
      if (path[i] === v) return { t: 'ref', v: path.length - i };
    }
    if (depth >= maxDepth) return { t: 'cut', v: 'depth' };
    append(path, v);
    try {
      return container(v, depth + 1);
    } finally {
      path.length -= 1;
    }
  }

  function fields(v, depth) {
    const out = [];
    const keys = ownKeys(v);
    for (let i = 0; i < keys.length; i += 1) {
      const key = keys[i];
      if (typeof key !== 'string') continue;
      const d = desc(v, key);
      if (!d.enumerable) continue;
      append(out, [key, hasOwn(d, 'value') ? encode(d.value, depth) : { t: 'getter' }]);
    }
    return out;
  }

  function entries(v, next, depth, pairs) {
    const out = [];
    const it = apply(pairs ? mapEntries : setValues, v, []);
    for (;;) {
      const step = apply(next, it, []);
      if (step.done) return out;
      const item = step.value;
      append(out, pairs ? [encode(item[0], depth), encode(item[1], depth)] : encode(item, depth));
    }
  }

  function container(v, depth) {
    if (types.isDate(v)) return { t: 'date', v: numText(apply(dateTime, v, [])) };
    if (types.isRegExp(v)) {
      const last = ownData(v, 'lastIndex');
      return {
        t: 'regexp', source: apply(regexpSource, v, []), flags: apply(regexpFlags, v, []),
        last_index: typeof last === 'number' ? numText(last) : '0',
      };
    }
    if (types.isMap(v)) return { t: 'map', v: entries(v, mapNext, depth, true) };
    if (types.isSet(v)) return { t: 'set', v: entries(v, setNext, depth, false) };
    if (types.isTypedArray(v)) {
      const out = [];
      const n = apply(typedLength, v, []);
      for (let i = 0; i < n; i += 1) {
        const item = v[i];
        append(out, typeof item === 'bigint' ? apply(bigintText, item, []) : numText(item));
      }
      return { t: 'typed', kind: apply(typedTag, v, []), v: out };
    }
    if (types.isArrayBuffer(v)) {
      return { t: 'buffer', v: apply(bufferText, BufferFrom(v), ['base64']) };
    }
    for (let i = 0; i < OPAQUE.length; i += 1) {
      if (OPAQUE[i][1](v)) return { t: 'opaque', v: OPAQUE[i][0] };
    }
    if (isArray(v)) return array(v, depth);
    const proto = getProto(v);
    if (types.isNativeError(v)) {
      const message = ownData(v, 'message');
      return {
        t: 'error', class: proto === null ? '' : className(proto),
        message: typeof message === 'string' ? message : '', v: fields(v, depth),
      };
    }
    if (proto === ObjectProto) return { t: 'object', v: fields(v, depth) };
    if (proto === null) return { t: 'object', v: fields(v, depth), null_proto: true };
    return { t: 'instance', class: className(proto), v: fields(v, depth) };
  }

  function array(v, depth) {
    const out = [];
    const n = ownData(v, 'length');
    for (let i = 0; i < n; i += 1) {
      if (budget <= 0) {
        append(out, { t: 'cut', v: 'size' });
        break;
      }
      const d = desc(v, apply(numberText, i, []));
      if (d === undefined) {
        budget -= 1;
        append(out, { t: 'hole' });
      } else {
        append(out, hasOwn(d, 'value') ? encode(d.value, depth) : { t: 'getter' });
      }
    }
    return { t: 'array', v: out };
  }

  return (v) => encode(v, 0);
}

// Tagged nodes back to values (the call's arguments and `this`). `classes` maps a class name
// to a constructor whose prototype an instance of that name gets (the target's own class);
// any other class name gets a fresh class of that name, one per name in a decoding.
function decoder(classes) {
  const path = [];
  const made = { __proto__: null };

  function classFor(name) {
    if (classes[name] !== undefined) return classes[name];
    if (made[name] === undefined) made[name] = { [name]: class {} }[name];
    return made[name];
  }

  function decode(node) {
    switch (node.t) {
      case 'undefined': return undefined;
      case 'null': return null;
      case 'bool': return node.v === true;
      case 'num': return NumberCtor(node.v);
      case 'bigint': return BigIntCtor(node.v);
      case 'str': return StringCtor(node.v);
      case 'symbol': return SymbolCtor(node.v === null ? undefined : node.v);
      case 'function': {
        const name = StringCtor(node.v);
        return node.answers === undefined ? unreplayed(name) : answering(name, node.answers, decode);
      }
      case 'ref': {
        const at = path.length - node.v;
        if (!(node.v >= 1 && at >= 0)) throw new Error('a ref past the outermost value');
        return path[at];
      }
      case 'date': return new DateCtor(NumberCtor(node.v));
      case 'regexp': {
        const re = new RegExpCtor(node.source, node.flags);
        re.lastIndex = NumberCtor(node.last_index);
        return re;
      }
      case 'typed': {
        const Kind = TYPED[node.kind];
        if (Kind === undefined) throw new Error(`unknown typed array ${node.kind}`);
        const big = node.kind.startsWith('Big');
        const items = [];
        for (let i = 0; i < node.v.length; i += 1) {
          items[i] = big ? BigIntCtor(node.v[i]) : NumberCtor(node.v[i]);
        }
        return new Kind(items);
      }
      case 'buffer': {
        const bytes = BufferFrom(node.v, 'base64');
        const out = new ArrayBuffer(bytes.length);
        new Uint8Array(out).set(bytes);
        return out;
      }
      default: return filled(node);
    }
  }

  function filled(node) {
    const shell = empty(node);
    append(path, shell);
    try {
      fill(shell, node);
    } finally {
      path.length -= 1;
    }
    return shell;
  }

  function empty(node) {
    switch (node.t) {
      case 'array': return new ArrayCtor(node.v.length);
      case 'object': return node.null_proto === true ? create(null) : {};
      case 'instance': return create(classFor(StringCtor(node.class)).prototype);
      case 'error': {
        const name = StringCtor(node.class);
        const error = new ErrorCtor(StringCtor(node.message));
        setProto(error, (ERRORS[name] || errorClass(name)).prototype);
        return error;
      }
      case 'map': return new MapCtor();
      case 'set': return new SetCtor();
      default: throw new Error(`cannot rebuild a value tagged ${StringCtor(node.t)}`);
    }
  }

  function errorClass(name) {
    if (classes[name] !== undefined) return classes[name];
    const key = `error:${name}`;
    if (made[key] === undefined) made[key] = { [name]: class extends Error {} }[name];
    return made[key];
  }

  function fill(shell, node) {
    const items = node.v;
    for (let i = 0; i < items.length; i += 1) {
      const item = items[i];
      if (node.t === 'array') {
        if (item.t !== 'hole') setField(shell, StringCtor(i), item);
      } else if (node.t === 'map') {
        apply(mapSet, shell, [decode(item[0]), decode(item[1])]);
      } else if (node.t === 'set') {
        apply(setAdd, shell, [decode(item)]);
      } else {
        setField(shell, StringCtor(item[0]), item[1]);
      }
    }
  }

  function setField(shell, key, node) {
    if (node.t === 'getter') {
      defineProperty(shell, key, {
        __proto__: null, get: () => undefined, enumerable: true, configurable: true,
      });
    } else {
      defineProperty(shell, key, {
        __proto__: null, value: decode(node), enumerable: true, writable: true, configurable: true,
      });
    }
  }

  return decode;
}

// A function argument: recorded by name only, so calling it says so (a later slice replays
// recorded behaviour).
// A recorded function argument's answers are keyed by its arguments' encoding at these limits,
// by the recorder (`answered`) and the runner alike.
const ANSWER_DEPTH = 8;
const ANSWER_ITEMS = 500;
const MAX_ANSWERS = 200;

function answerArgs(args) {
  const encode = encoder(ANSWER_DEPTH, ANSWER_ITEMS);
  const nodes = [];
  for (let i = 0; i < args.length; i += 1) append(nodes, encode(args[i]));
  return nodes;
}

// `fn` (a call's function argument) wrapped to note each call it answers, its arguments and
// what it returned or threw, into `answers` (at most MAX_ANSWERS; past them, or once it returns
// a promise, which no table can give back, `answers.complete` is false); it passes every call
// through, `this` and `new` included.
function answered(fn, answers) {
  const own = ownData(fn, 'name');
  const name = typeof own === 'string' ? own : '';
  return {
    [name]: function (...args) {
      const nodes = answerArgs(args);
      const encode = encoder(ANSWER_DEPTH, ANSWER_ITEMS);
      let value;
      try {
        value = new.target === undefined ? apply(fn, this, args) : construct(fn, args, new.target);
      } catch (error) {
        if (answers.length < MAX_ANSWERS) append(answers, { args: nodes, error: encode(error) });
        else answers.complete = false;
        throw error;
      }
      if (types.isPromise(value) || answers.length >= MAX_ANSWERS) answers.complete = false;
      else append(answers, { args: nodes, value: encode(value) });
      return value;
    },
  }[name];
}

// A recorded function argument rebuilt from its answers: each call whose arguments it answered
// (their encoding the same, once decoded and encoded again here: the host writes a number its
// own way) gets that value, or that error thrown, again; any other throws.
function answering(name, answers, decode) {
  const table = new MapCtor();
  for (let i = 0; i < answers.length; i += 1) {
    const args = [];
    for (let j = 0; j < answers[i].args.length; j += 1) append(args, decode(answers[i].args[j]));
    apply(mapSet, table, [stringify(answerArgs(args)), answers[i]]);
  }
  return {
    [name](...args) {
      const answer = apply(mapGet, table, [stringify(answerArgs(args))]);
      if (answer === undefined) {
        throw new Error(`replicate: the tests never called the function argument ${name} so`);
      }
      if (hasOwn(answer, 'error')) throw decode(answer.error);
      return decode(answer.value);
    },
  }[name];
}

function unreplayed(name) {
  return {
    [name]() {
      throw new Error(`replicate: the function argument ${name} is not replayed`);
    },
  }[name];
}

module.exports = { encoder, decoder, thrown, append, hasOwn, answered };
