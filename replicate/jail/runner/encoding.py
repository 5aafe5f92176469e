"""Tagged values: any Python object encoded by exact type, without calling its own methods
(``replicate.grading.compare`` reads them on the trusted side)."""

from __future__ import annotations

import builtins
import types
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .base import (
    _BUILTINS,
    _EXC_MSG_CAP,
    _MSG_CAP,
    _NOT_FIELDS,
    _OBJECT_SIZE,
    _RANDOM_STATE,
    _READ,
    _SET_RANDOM_STATE,
    _UNVERIFIED,
    EncodeLimits,
    Tagged,
    _CoroutineType,
    _crc32,
    _dict_get,
    _dict_items,
    _exc_args,
    _exc_str,
    _GetSet,
    _id,
    _instance_dict,
    _is_in,
    _issubclass,
    _Member,
    _member_get,
    _member_objclass,
    _next,
    _proxy_get,
    _proxy_items,
    _sorted,
    _table,
    _Timeout,
    _TooLarge,
    _type,
    _type_basicsize,
    _type_dict,
    _type_dictoffset,
    _type_itemsize,
    _type_module,
    _type_mro,
    _type_qualname,
    _type_weakrefoffset,
)
from .by_type import _COMPOUNDS, _SCALARS, _SUB_BASES
from .channel import _dumps
from .naming import (
    _alias,
    _bound_builtin,
    _callable_name,
    _sentinel_alias,
    state_type_name,
    type_name,
)
from .probes import _PROBE, _PROBED, _drive, _fresh, _unnamed_function

if TYPE_CHECKING:
    from .calling import ArgReads
    from .probes import Probes

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


class _Layout:
    """What encoding needs to know about a type, read from its MRO's own dicts."""

    __slots__ = ("dict_desc", "dict_ok", "has_next", "is_exc", "members", "plain", "sub_base")

    def __init__(self, t: type) -> None:
        mro = _type_mro(t)
        self.members: list[tuple[str, Any, type]] = []
        self.dict_desc: Any = None
        self.sub_base: type | None = None
        self.has_next = False
        self.is_exc = False
        for klass in mro:
            self.is_exc = self.is_exc or klass is BaseException
            if self.sub_base is None and _is_in(klass, _SUB_BASES):
                self.sub_base = klass
            for name, desc in _proxy_items(_type_dict(klass)):
                if name == "__next__":
                    self.has_next = True
                elif name == "__dict__" and self.dict_desc is None:
                    self.dict_desc = desc
                elif _type(desc) is _Member and _member_objclass(desc) is klass:
                    self.members += [] if name in _NOT_FIELDS else [(name, desc, klass)]
        # a `__dict__` that is not the native descriptor (a property, say) hides the real one
        kind = _type(self.dict_desc)
        self.dict_ok = self.dict_desc is None or kind is _GetSet or kind is _Member
        self.plain = _type_itemsize(t) == 0 and _type_basicsize(t) == _plain_size(t, self)


def _plain_size(t: type, layout: _Layout) -> int:
    """The instance size of a class whose state is only slots and a `__dict__` (no C fields)."""
    size = _OBJECT_SIZE + 8 * len(layout.members)
    size += 8 if _type_weakrefoffset(t) else 0
    return size + (8 if _type_dictoffset(t) > 0 else 0)


# ---------------------------------------------------------------- encoding


_MAX_VISITS = 64


class _Shared:
    """An object's encoding, kept for the next path through the value that reaches it: what it
    spent of the size budget, how deep below the object it went, and its visits (the encoder's
    log over `span`, counted when first reused)."""

    __slots__ = ("counts", "height", "obj", "span", "spent", "tagged")

    def __init__(self, obj: Any, tagged: Tagged, spent: int, height: int, span: range) -> None:
        self.obj, self.tagged, self.spent, self.height, self.span = obj, tagged, spent, height, span
        self.counts: dict[int, int] | None = None


class _Encoder:
    def __init__(
        self,
        limits: EncodeLimits,
        probes: Probes | None = None,
        share: bool = True,
        reads: ArgReads | None = None,
    ) -> None:
        self.limits = limits
        self.probes = probes  # set while encoding a returned value: its functions are probed
        self.reads = reads  # set while encoding the arguments after the call
        self.budget = limits.max_bytes
        self.path: set[int] = set()
        self.visits: dict[int, int] = {}
        self.layouts: dict[int, tuple[type, _Layout]] = {}
        # An object reached again by another path is encoded as it was the first time, when
        # that encoding met no cycle, no depth bound and no code of the value's own (`reuse`)
        self.shared: dict[int, _Shared] | None = {} if share and probes is None else None
        self.log: list[Any] = []  # the objects visited in order; a reused one's visits as a dict
        self.deepest = 0  # the deepest `enc` call below the object being encoded
        self.cycles = 0

    def spend(self, n: int) -> None:
        self.budget -= n
        if self.budget < 0:
            raise _TooLarge()

    def layout(self, t: type) -> _Layout:
        entry = self.layouts.get(_id(t))
        if entry is None or entry[0] is not t:
            entry = (t, _Layout(t))
            self.layouts[_id(t)] = entry
        return entry[1]

    def enc(self, x: Any, depth: int) -> Tagged:
        if depth > self.deepest:
            self.deepest = depth
        if depth > self.limits.max_depth:
            return {"t": "deep"}
        self.spend(20)  # about the JSON of an empty node
        t = _type(x)
        if _is_in(t, _SCALARS):
            return _SCALARS[_id(t)][1](self, x)
        if _id(x) in self.path:
            self.cycles += 1
            return {"t": "cycle"}
        shared = self.reusable(x, depth)
        if shared is not None:
            return self.reuse(shared, depth)
        self.visit(_id(x), 1)
        start, budget, outer, cycles = len(self.log), self.budget, self.deepest, self.cycles
        self.log.append(_id(x))
        self.deepest = depth  # from here, how deep `x`'s own encoding goes
        self.path.add(_id(x))
        try:
            tagged = self.compound(x, t, depth + 1)
        finally:
            self.path.discard(_id(x))
        height = self.deepest - depth
        clean = cycles == self.cycles and depth + height <= self.limits.max_depth
        if self.shared is not None and clean:
            span = range(start, len(self.log))
            self.shared[_id(x)] = _Shared(x, tagged, budget - self.budget, height, span)
        if outer > self.deepest:
            self.deepest = outer
        return tagged

    def visit(self, key: int, n: int) -> None:
        """`n` more visits of object `key`. A structure that shares objects (a doubly linked
        list, say) has exponentially many paths through it: past a few visits of one object,
        the value counts as too large."""
        seen = _dict_get(self.visits, key, 0) + n
        if seen > _MAX_VISITS:
            raise _TooLarge()
        self.visits[key] = seen

    def reusable(self, x: Any, depth: int) -> _Shared | None:
        """`x`'s encoding from another path, where it reads the same from here: it met no cycle
        and no depth bound, nor does it from this depth."""
        shared = None if self.shared is None else _dict_get(self.shared, _id(x))
        if shared is None or shared.obj is not x:
            return None
        return shared if depth + shared.height <= self.limits.max_depth else None

    def reuse(self, shared: _Shared, depth: int) -> Tagged:
        """`shared.obj` reached again: its encoding, the budget and visits charged as encoding it
        again would (the same `toolarge`), without walking it."""
        counts = shared.counts
        if counts is None:
            counts = shared.counts = self.tally(shared.span)
        for key, n in _dict_items(counts):
            self.visit(key, n)
        self.spend(shared.spent)
        self.log.append(counts)
        if depth + shared.height > self.deepest:
            self.deepest = depth + shared.height
        return shared.tagged

    def tally(self, span: range) -> dict[int, int]:
        """The visits of each object the log holds over `span`."""
        counts: dict[int, int] = {}
        for item in self.log[span.start : span.stop]:
            if _type(item) is int:
                counts[item] = _dict_get(counts, item, 0) + 1
                continue
            for key, n in _dict_items(item):
                counts[key] = _dict_get(counts, key, 0) + n
        return counts

    def compound(self, x: Any, t: type, d: int) -> Tagged:
        if self.probes is not None and self.probes.left > 0 and _unnamed_function(x):
            return self.probed(x, self.probes, d)
        if _is_in(t, _COMPOUNDS):
            return _COMPOUNDS[_id(t)][1](self, x, d)
        if _issubclass(t, type):
            return {"t": "ref", "v": type_name(x)}
        if t is types.BuiltinFunctionType:
            bound = _bound_builtin(self, x, d)
            if bound is not None:
                return bound
        if _is_in(t, _FUNCTION_TYPES):
            return {"t": "ref", "v": _callable_name(x)}
        name = type_name(t)
        alias = _alias(x, _type_module(t)) if name.startswith(_UNVERIFIED) else None
        if t is object:  # a bare `object()`: a sentinel by the module's name for it
            alias = _sentinel_alias(x)
        if alias is not None:  # a sentinel of a local class, say: the module's own object
            return {"t": "ref", "v": alias}
        lay = self.layout(t)
        if not lay.dict_ok:
            return {"t": "opaque", "type": type_name(t)}
        if lay.is_exc:
            args = self.enc(_exc_args(x), d)
            fields = self.fields(x, lay, d) or {}
            return {"t": "exc", "type": type_name(t), "args": args, "fields": fields}
        if lay.sub_base is not None:
            base = _SUB_BASES[_id(lay.sub_base)][1](self, x, d)
            fields = self.fields(x, lay, d) or {}
            return {"t": "sub", "type": type_name(t), "base": base, "fields": fields}
        if lay.has_next:
            return self.iterate(x, d)
        state = self.fields(x, lay, d) if lay.plain else None
        if state is None:
            return {"t": "opaque", "type": type_name(t)}
        if name.startswith(_UNVERIFIED):  # its class's own `__eq__` may run: what was encoded
            self.shared = None  # may change (`state_type_name`)
        typed = state_type_name(x, t, name, lay.members, lay.dict_desc)
        return {"t": "obj", "type": typed, "fields": state}

    def probed(self, fn: Callable[..., Any], probes: Probes, d: int) -> Tagged:
        """`fn` by its outcome on each of the input's probes; what those return is encoded as
        usual, a function among it not probed again."""
        probes.left -= 1
        self.probes = None
        try:
            return {
                "t": _PROBED,
                "v": [self.probe(fn, call, d) for call in probes.calls(fn, _probe_key)],
            }
        finally:
            self.probes = probes

    def probe(self, fn: Callable[..., Any], call: list[Any], d: int) -> Tagged:
        args = _fresh(call)  # copies of its own: no probe sees what another changed
        shown = self.seq(args, d)
        try:
            if _RANDOM_STATE:
                _SET_RANDOM_STATE(_RANDOM_STATE[0])
            value = fn(*args)
            if _type(value) is _CoroutineType:
                value = _drive(value)
        except BaseException as exc:
            if _type(exc) is _Timeout:
                raise
            return {"t": _PROBE, "args": shown, "raised": exception_record(exc)}
        return {"t": _PROBE, "args": shown, "v": self.enc(value, d)}

    def fields(self, x: Any, lay: _Layout, d: int) -> Tagged | None:
        """Set slots and the instance `__dict__`, by name; None when the object has neither."""
        found: dict[str, Any] = {}
        for name, desc, klass in lay.members:
            try:
                found[name] = _member_get(desc, x, klass)
            except AttributeError:  # an unset slot
                continue
        inst = _instance_dict(x, lay.dict_desc)
        if inst is None and not lay.members:
            return None
        for key, value in _dict_items(inst or {}):
            name = key if _type(key) is str else "\x00" + _dumps(self.enc(key, d))
            found["__dict__:" + name if name in found else name] = value
        return {name: self.enc(found[name], d) for name in _sorted(found)}

    def seq(self, items: Iterable[Any], d: int) -> list[Tagged]:
        return [self.enc(item, d) for item in items]

    def pairs(self, items: Iterable[tuple[Any, Any]], d: int) -> list[list[Tagged]]:
        return [[self.enc(k, d), self.enc(v, d)] for k, v in items]

    def unordered(self, items: Iterable[Any], d: int) -> list[Tagged]:
        encoded = [(_dumps(e), e) for e in self.seq(items, d)]
        return [e for _, e in _sorted(encoded, key=_first)]

    def iterate(self, it: Iterator[Any], d: int) -> Tagged:
        self.shared = None  # the iterator's own code runs: what was encoded may change
        items: list[Tagged] = []
        out: Tagged = {"t": "iter", "v": items, "truncated": False}
        read = None if self.reads is None else self.reads.of(it)
        if read is not None:
            out[_READ] = read
        while True:
            try:
                item = _next(it)
            except StopIteration:
                return out
            except BaseException as exc:  # a generator raising midway is behaviour
                if _type(exc) is _Timeout:
                    raise
                out["raised"] = exception_record(exc)
                return out
            if len(items) >= self.limits.max_items:
                out["truncated"] = True
                return out
            items.append(self.enc(item, d))


def _first(pair: tuple[str, Any]) -> str:
    return pair[0]


def encode(
    value: Any,
    limits: EncodeLimits | None = None,
    probes: Probes | None = None,
    share: bool = True,
    reads: ArgReads | None = None,
) -> Tagged:
    """The tagged encoding of one value; `toolarge` past the size budget, `opaque` on failure.
    With `probes` (a call's returned value), a function without a verified name is probed;
    with `reads` (a call's arguments after it), an iterator it counted carries its counts.
    `share=False` walks an object again on every path that reaches it (the same result)."""
    try:
        return _Encoder(limits or EncodeLimits(), probes, share, reads).enc(value, 0)
    except _TooLarge:
        return {"t": "toolarge"}
    except BaseException as exc:
        if _type(exc) is _Timeout:
            raise
        return {"t": "opaque", "type": "<encode-error>"}


def _probe_key(value: Any) -> str:
    """Which probe values are alike: their encodings, as JSON text."""
    return _dumps(encode(value))


def exception_record(exc: BaseException) -> dict[str, str]:
    """`{"type": verified qualified name, "msg": str}` without calling the exception's methods."""
    args = _exc_args(exc)
    if _type(args) is tuple and all(_is_in(_type(a), _PLAIN) for a in args):
        try:
            msg = _builtin_str(_type(exc))(exc)
        except ValueError:  # an int too long to print
            msg = "<unprintable>"
    else:
        msg = _dumps(encode(args, EncodeLimits(max_bytes=4 * _MSG_CAP)))
    if len(msg) > _EXC_MSG_CAP:
        mark = f"...<{len(msg)} chars, crc32 {_crc32(msg.encode('utf-8', 'replace')):08x}>"
        msg = msg[:_EXC_MSG_CAP] + mark
    return {"type": type_name(_type(exc)), "msg": msg}


def _builtin_str(t: type) -> Callable[[BaseException], str]:
    """`__str__` of the nearest builtin exception class: a subclass's own override never runs."""
    for klass in _type_mro(t):
        method = _proxy_get(_type_dict(klass), "__str__", None)
        if method is not None and _dict_get(_BUILTINS, _type_qualname(klass)) is klass:
            return method
    return _exc_str


_PLAIN = _table({str: None, int: None, float: None, bool: None})


_FUNCTION_TYPES = _table(
    {
        types.FunctionType: None,
        types.BuiltinFunctionType: None,
        types.MethodDescriptorType: None,
        types.WrapperDescriptorType: None,
        types.ClassMethodDescriptorType: None,
        types.MethodWrapperType: None,
    }
)
