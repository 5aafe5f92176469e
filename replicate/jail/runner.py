"""The in-jail runner: import the candidate, call it on each input, report tagged JSON
(docs/design.md §4).

Shipped as source into the sandbox and run as ``python -I -S runner.py`` (or ``-P -s -S`` where
PYTHONHASHSEED must be honoured); standard library only, nothing from ``replicate``.  The wire
format's names and shapes (``replicate.jail.wire``) are shipped beside it and loaded from there
(`wire_beside`), not imported: the jail has no ``replicate`` package.

Setup (``argv[1]``, optional, one JSON object): ``sys_path`` (prepended in order), ``site_dirs``
(each through ``site.addsitedir``), ``bytecode`` (a compiled-code table, see `_use_bytecode`),
applied before stdin is read, so a jail started ahead of its candidate has done it already.
Job (stdin: one JSON object on the first line, then the run's nonce, unless the object holds
it): ``nonce``, ``module``, ``qualname`` (``func`` or ``Cls.meth``),
``kind``, ``inputs`` (``[{"i", "pickle_b64"}]``, each a pickled ``(args, kwargs)``, self first
for methods, or a pickled recipe ``(RECIPE_TAG, seed, {position: value}, {keyword:
value})``: the call pickled in ``seed`` (bytes) with those arguments replaced, or
``(CTOR_RECIPE_TAG, seed, ctor, build, {position: value}, {keyword: value}, {position:
value}, {keyword: value})`` for a method: ``ctor`` (bytes) is the pickled ``(args, kwargs)`` of
a class call of ``self``'s class, its arguments replaced as the last two maps say; with
``build``, ``self`` is built afresh as ``type(self)(*args, **kwargs)`` (at load, so a class call
that raises is a ``load_error``), else the seed's ``self`` stays),
``call_timeout_s``, ``max_items``, ``max_depth``, ``max_bytes``, ``channel_fd`` and optionally
``encode_inputs`` (also report the arguments before the call as ``args_in``/``kwargs_in``, and
a recipe's class-call arguments as ``ctor_in`` ``{"args", "kwargs"}``).

Frames (fd ``channel_fd`` only, ``<nonce> <json>\n`` each): ``started`` | ``ready`` (the target
imported) or ``import_error`` (type, msg) | ``loaded`` (every input unpickled, before any call) |
``call`` (i), just before each call, so the host can time it with its own clock
(``replicate.jail.calltime``) | ``result`` (i, outcome), written as soon as each call ends,
in one write with the next ``call`` frame | ``done``.  An outcome is
``returned`` (value) or ``raised`` (exc: type, msg), both with ``args``/``kwargs`` after the call
and ``t``; or ``timeout``; or ``load_error`` (msg).  Values are encoded by exact type without
calling the objects' own methods; the trusted side parses and compares them
(``replicate.grading.compare``).  The one exception: a function the call returns whose name does
not verify is called on probes drawn from the input (`Probes`), inside the call's time window,
and encoded by what they gave (``wire.PROBED``).

Session (``replicate.jail.session``): a first line ``{"session": {...}}`` instead of a job makes
this process seal itself against its children (`_seal`) and fork a child per request read from
an inherited pipe, each child running its request's job as above (`run_session`).

Before any candidate code is imported, this module takes a private copy of the builtins (its
functions look names up there, not in ``builtins``) and captures every library function it needs
in a module-level name, so a candidate patching ``builtins``, ``json``, ``types`` or
``sys.modules`` does not change how values are encoded.  That is best effort: the real guarantee is
that no expected output ever enters this process, so whatever a candidate forges here is worth no
more than computing the answer.
"""

from __future__ import annotations

import _signal as _signal_c
import _thread
import binascii
import bisect
import builtins
import collections
import datetime
import decimal
import functools
import gc
import importlib
import importlib.machinery
import json
import json.encoder
import marshal
import os
import pathlib
import pickle
import random
import re
import select
import signal
import site
import sys
import time
import types
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

globals()["__builtins__"] = dict(builtins.__dict__)  # functions below resolve builtins here


def wire_beside(runner_file: str) -> str:
    """The wire module's file as shipped next to the runner at `runner_file`: compiled beside a
    compiled runner (``replicate.jail.bytecode``), source beside the source."""
    name = "wire.pyc" if runner_file.endswith(".pyc") else "wire.py"
    return os.path.join(os.path.dirname(runner_file), name)


def _load_wire(path: str) -> types.ModuleType:
    """The wire module from its file, kept out of `sys.modules` (a repository may have a module
    of that name; a candidate finds nothing there to patch: its names are read once, below)."""
    machinery = importlib.machinery
    loader_type = (
        machinery.SourcelessFileLoader if path.endswith(".pyc") else machinery.SourceFileLoader
    )
    module = types.ModuleType("replicate_wire")
    module.__file__ = path
    code = loader_type(module.__name__, path).get_code(module.__name__)
    if code is None:
        raise ImportError(f"no wire module at {path}")
    exec(code, module.__dict__)
    return module


if TYPE_CHECKING:
    from replicate.jail import wire
else:
    wire = _load_wire(wire_beside(__file__))

_type = type
_id = id
_next = next
_sorted = sorted
_issubclass = issubclass
_float_hex = float.hex
_int_repr = int.__repr__
_complex_real = complex.__dict__["real"].__get__
_complex_imag = complex.__dict__["imag"].__get__
_dict_items = dict.items
_dict_get = dict.get
_dict_pop = dict.pop
_proxy_get = types.MappingProxyType.get
_proxy_items = types.MappingProxyType.items
_type_mro = type.__dict__["__mro__"].__get__
_type_dict = type.__dict__["__dict__"].__get__
_type_module = type.__dict__["__module__"].__get__
_type_qualname = type.__dict__["__qualname__"].__get__
_function_module = types.FunctionType.__dict__["__module__"].__get__
_function_qualname = types.FunctionType.__dict__["__qualname__"].__get__
_function_code = types.FunctionType.__dict__["__code__"].__get__
_function_defaults = types.FunctionType.__dict__["__defaults__"].__get__
_code_argcount = types.CodeType.__dict__["co_argcount"].__get__
_code_flags = types.CodeType.__dict__["co_flags"].__get__
_Partial = functools.partial
_FunctionType = types.FunctionType
_partial_func = functools.partial.__dict__["func"].__get__
_partial_args = functools.partial.__dict__["args"].__get__
_type_basicsize = type.__dict__["__basicsize__"].__get__
_type_itemsize = type.__dict__["__itemsize__"].__get__
_type_dictoffset = type.__dict__["__dictoffset__"].__get__
_type_weakrefoffset = type.__dict__["__weakrefoffset__"].__get__
_builtin_self = types.BuiltinFunctionType.__dict__["__self__"].__get__
_builtin_name = types.BuiltinFunctionType.__dict__["__name__"].__get__
_builtin_eq = types.BuiltinFunctionType.__eq__
_descriptor_get = types.MethodDescriptorType.__get__
_ModuleType = types.ModuleType
_module_dict: Callable[[Any], dict[str, Any]] = vars(types.ModuleType)["__dict__"].__get__
_GetSet = types.GetSetDescriptorType
_Member = types.MemberDescriptorType
_getset_get = types.GetSetDescriptorType.__get__
_member_get = types.MemberDescriptorType.__get__
_member_objclass = types.MemberDescriptorType.__dict__["__objclass__"].__get__
_exc_args = BaseException.__dict__["args"].__get__
_exc_str = BaseException.__str__
_json_str = json.encoder.encode_basestring_ascii
_json_loads = json.loads
_b2a_base64 = binascii.b2a_base64
_a2b_base64 = binascii.a2b_base64
_crc32 = zlib.crc32
_pickle_loads = pickle.loads
_import_module = importlib.import_module
_addsitedir = site.addsitedir
_os_write = os.write
_os_stat = os.stat
_marshal_loads = marshal.loads
_os_exit = os._exit
_getpid = os.getpid
_perf = time.perf_counter
# The C functions, not signal.py's wrappers (which convert every mask to a set of enums): the
# runner arms and disarms the alarm around every call.
_setitimer = _signal_c.setitimer
_sigmask = _signal_c.pthread_sigmask
_signal = _signal_c.signal
_SIGALRM = signal.SIGALRM
_ITIMER_REAL = signal.ITIMER_REAL
_SIG_BLOCK = signal.SIG_BLOCK
_SIG_UNBLOCK = signal.SIG_UNBLOCK
_set_int_digits = sys.set_int_max_str_digits
_sys_modules = sys.modules
_sys_path = sys.path
_BUILTINS = dict(builtins.__dict__)
_odict_items = collections.OrderedDict.items
_deque_iter = collections.deque.__iter__
_deque_maxlen = collections.deque.__dict__["maxlen"].__get__
_default_factory = collections.defaultdict.__dict__["default_factory"].__get__
_decimal_str = decimal.Decimal.__str__
_path_str = pathlib.PurePath.__str__
_CoroutineType = types.CoroutineType
# Locks (the exact C types of threading.Lock and threading.RLock) are encoded by whether they are
# held, read through these methods: an RLock has no `locked()` in 3.11, its C repr says it.
_LockType = _thread.LockType
_RLockType = _thread.RLock
_lock_locked = _thread.LockType.locked
_rlock_repr = _thread.RLock.__repr__
_OBJECT_SIZE = object.__basicsize__
_MISSING = object()
_UNVERIFIED = "<unverified>"
_MSG_CAP = 500
_RECIPE = wire.RECIPE_TAG
_RECIPE_CTOR = wire.CTOR_RECIPE_TAG
_CALL_HEAD = wire.CALL_HEAD
_RESULT = wire.RESULT
_RETURNED, _RAISED, _TIMEOUT = wire.RETURNED, wire.RAISED, wire.TIMEOUT
_LOAD_ERROR, _RUNNER_ERROR = wire.LOAD_ERROR, wire.RUNNER_ERROR
_STARTED, _READY, _IMPORT_ERROR = wire.STARTED, wire.READY, wire.IMPORT_ERROR
_LOADED, _DONE, _EXITED = wire.LOADED, wire.DONE, wire.EXITED
# The global random generator is reset before every call to the state `random.seed(0)` gives: a
# function that draws from it (more_itertools.sample, say) gives the same outcome on every run
# instead of passing golden runs by chance and failing when graded. `setstate` is captured here,
# before any candidate code runs, and needs no builtins (a candidate may have patched them).
_SET_RANDOM_STATE = random.setstate
_GET_RANDOM_STATE = random.getstate
_RANDOM_STATE: list[Any] = []
# Unpickling an input may import the repository's test modules (a function defined in a test file
# is recorded by reference), and with them pytest: seconds on a busy machine. That is our data,
# not the candidate's work, so loading gets at least this long; the run's total limit still holds.
_LOAD_TIMEOUT_S = 30.0
_NOT_FIELDS = ("__dict__", "__weakref__", "__suppress_context__")
_EXC_MSG_CAP = 100_000
_ALRM = {_SIGALRM}
_SNAPSHOT: dict[str, dict[str, Any]] = {}
_PID: list[int] = []

Tagged = wire.Tagged


def _is_in(obj: object, table: dict[int, Any]) -> bool:
    """Membership by identity: never calls a candidate's `__eq__` or `__hash__`."""
    return _id(obj) in table and table[_id(obj)][0] is obj


class EncodeLimits:
    """Bounds on one encoded value: iterator items, nesting depth, approximate JSON size."""

    __slots__ = ("max_bytes", "max_depth", "max_items")

    def __init__(
        self, max_items: int = 10_000, max_depth: int = 64, max_bytes: int = 2_000_000
    ) -> None:
        self.max_items = max_items
        self.max_depth = max_depth
        self.max_bytes = max_bytes


class _Timeout(BaseException):
    """Raised by the SIGALRM handler inside a timed region; private to the runner."""


class _TooLarge(Exception):
    """The size budget of one value ran out."""


class _Alarm:
    armed = False
    fired = False


def _on_alarm(signum: int, frame: object) -> None:
    if _Alarm.armed:
        _Alarm.fired = True
        raise _Timeout()


# ---------------------------------------------------------------- names, verified


def _resolve(module: str, qualname: str) -> object:
    """The object at `module.qualname`, walking namespaces without getattr; _MISSING if none."""
    if module == "builtins":
        ns: Any = _BUILTINS
    elif module in _SNAPSHOT:
        ns = _SNAPSHOT[module]
    else:
        mod = _dict_get(_sys_modules, module, _MISSING)
        if _type(mod) is not _ModuleType:
            return _MISSING
        ns = _module_dict(mod)
    obj: object = _MISSING
    for part in qualname.split("."):
        if _type(ns) is dict:
            obj = _dict_get(ns, part, _MISSING)
        elif _type(ns) is types.MappingProxyType:
            obj = _proxy_get(ns, part, _MISSING)
        else:
            return _MISSING
        if _type(obj) is _ModuleType:
            ns = _module_dict(obj)
        elif _issubclass(_type(obj), type):
            ns = _type_dict(obj)
        else:
            ns = None
    return obj


def _verified(obj: object, module: object, qualname: object) -> str:
    if _type(module) is not str or _type(qualname) is not str:
        return _UNVERIFIED + "?"
    claimed = module + "." + qualname
    found = _resolve(module, qualname)
    if found is obj:
        return claimed
    if _is_in(_type(found), _METHOD_WRAPPERS) and found.__func__ is obj:  # type: ignore[attr-defined]
        return claimed
    return _UNVERIFIED + claimed


def type_name(cls: type) -> str:
    """`module.qualname` of a class, or `<unverified>...` unless that name gives back `cls`
    (or `cls` came by value with an input: `_name_by_value`)."""
    name = _verified(cls, _type_module(cls), _type_qualname(cls))
    if name.startswith(_UNVERIFIED):
        known = _dict_get(_ALIASES, _id(cls))
        if known is not None and known[0] is cls and known[1] is not None:
            return known[1]
    return name


def _callable_name(fn: Any) -> str:
    # `fn` has an exact native type (function, builtin, descriptor): getattr runs no candidate code
    module = getattr(fn, "__module__", None)
    owner = getattr(fn, "__objclass__", None)
    if module is None and _issubclass(_type(owner), type):
        module = _type_module(owner)
    name = _verified(fn, module, getattr(fn, "__qualname__", None))
    return name if not name.startswith(_UNVERIFIED) else _alias(fn, module) or name


def _bound_builtin(e: _Encoder, fn: Any, d: int) -> Tagged | None:
    """A builtin method bound to an object (`self.isdisjoint = self._set.isdisjoint`, kept in an
    instance's state) as a bound method: the object, and the type's method it is (checked: bound
    to the object, that method gives `fn` back). None for a module's function (`len`): it has a
    name of its own."""
    owner = _builtin_self(fn)
    if owner is None or _issubclass(_type(owner), _ModuleType):
        return None
    name = _builtin_name(fn)
    for klass in _type_mro(_type(owner)):
        method = _proxy_get(_type_dict(klass), name, None)
        if method is not None:
            break
    else:
        return None
    if _type(method) is not types.MethodDescriptorType:
        return None
    if _builtin_eq(_descriptor_get(method, owner), fn) is not True:
        return None
    return {"t": "boundmethod", "self": e.enc(owner, d), "func": e.enc(method, d)}


_ALIASES: dict[int, tuple[object, str | None]] = {}


def _alias(obj: object, module: object) -> str | None:
    """A verified name for an object whose own name does not resolve (an instance of a local
    class, a lambda): the first by name of `module`'s globals, or of the attributes of classes
    defined there, that is `obj` itself (a sentinel `_MISSING = make_sentinel()`, a class's
    `staticmethod(lambda ...)`); None when there is none.  Identity is the whole claim: another
    object of that class, or another lambda, has no such name."""
    if _type(module) is not str:
        return None
    known = _dict_get(_ALIASES, _id(obj))
    if known is not None and known[0] is obj:
        return known[1]
    found = None
    for name in _sorted(_holders(obj, module)):
        if _verified(obj, module, name) == module + "." + name:
            found = module + "." + name
            break
    _ALIASES[_id(obj)] = (obj, found)  # the object is kept: its id is not reused meanwhile
    return found


def _same_str(value: object, text: str) -> bool:
    return _type(value) is str and value == text  # an exact str: no candidate `__eq__` runs


def _holders(obj: object, module: str) -> list[str]:
    """Names in `module` (globals, and `Class.attr` of its own classes) bound to `obj`."""
    mod = _dict_get(_sys_modules, module)
    if _type(mod) is not _ModuleType:
        return []
    names = []
    for name, value in _dict_items(_module_dict(mod)):
        if _type(name) is not str:
            continue
        if value is obj:
            names.append(name)
        elif _issubclass(_type(value), type) and _same_str(_type_module(value), module):
            for attr, member in _proxy_items(_type_dict(value)):
                held = member.__func__ if _type(member) is staticmethod else member
                if held is obj and _type(attr) is str:
                    names.append(name + "." + attr)
    return names


def _module_name(mod: types.ModuleType) -> str:
    name = _dict_get(_module_dict(mod), "__name__")
    if _type(name) is str and _dict_get(_sys_modules, name) is mod:
        return name
    return _UNVERIFIED + (name if _type(name) is str else "?")


# ---------------------------------------------------------------- layout of a type


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


class _Encoder:
    def __init__(self, limits: EncodeLimits, probes: Probes | None = None) -> None:
        self.limits = limits
        self.probes = probes  # set while encoding a returned value: its functions are probed
        self.budget = limits.max_bytes
        self.path: set[int] = set()
        self.visits: dict[int, int] = {}
        self.layouts: dict[int, tuple[type, _Layout]] = {}

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
        if depth > self.limits.max_depth:
            return {"t": "deep"}
        self.spend(20)  # about the JSON of an empty node
        t = _type(x)
        if _is_in(t, _SCALARS):
            return _SCALARS[_id(t)][1](self, x)
        if _id(x) in self.path:
            return {"t": "cycle"}
        # A structure that shares objects (a doubly linked list, say) has exponentially many
        # paths through it: past a few visits of one object, the value counts as too large.
        seen = self.visits.get(_id(x), 0) + 1
        if seen > _MAX_VISITS:
            raise _TooLarge()
        self.visits[_id(x)] = seen
        self.path.add(_id(x))
        try:
            return self.compound(x, t, depth + 1)
        finally:
            self.path.discard(_id(x))

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
        return {"t": "obj", "type": type_name(t), "fields": state}

    def probed(self, fn: Callable[..., Any], probes: Probes, d: int) -> Tagged:
        """`fn` by its outcome on each of the input's probes; what those return is encoded as
        usual, a function among it not probed again."""
        probes.left -= 1
        self.probes = None
        try:
            return {"t": _PROBED, "v": [self.probe(fn, call, d) for call in probes.calls(fn)]}
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
        items: list[Tagged] = []
        out: Tagged = {"t": "iter", "v": items, "truncated": False}
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


def _instance_dict(x: Any, desc: Any) -> dict[Any, Any] | None:
    """The instance dict through the type's native `__dict__` descriptor, never a property."""
    if _type(desc) is _GetSet:
        value = _getset_get(desc, x)
    elif _type(desc) is _Member:
        value = _member_get(desc, x)
    else:
        return None
    return value if _type(value) is dict else None


def _enc_int(e: _Encoder, x: int) -> Tagged:
    try:
        text = _int_repr(x)
    except ValueError:  # the candidate restored the digit limit
        _set_int_digits(0)
        text = _int_repr(x)
    e.spend(len(text))
    return {"t": "int", "v": text}


def _enc_str(e: _Encoder, x: str) -> Tagged:
    e.spend(len(_json_str(x)))
    return {"t": "str", "v": x}


def _enc_bytes(e: _Encoder, x: bytes, tag: str = "bytes") -> Tagged:
    e.spend(len(x) * 4 // 3 + 4)
    return {"t": tag, "v": _b2a_base64(x, newline=False).decode("ascii")}


def _enc_complex(e: _Encoder, x: complex) -> Tagged:
    return {"t": "complex", "v": [_float_hex(_complex_real(x)), _float_hex(_complex_imag(x))]}


def _enc_tz(e: _Encoder, x: Any, d: int) -> Tagged:
    return {
        "t": "timezone",
        "offset": e.enc(x.utcoffset(None), d),
        "name": e.enc(x.tzname(None), d),
    }


def _enc_datetime(e: _Encoder, x: Any, d: int) -> Tagged:
    tag = "datetime" if _type(x) is datetime.datetime else "time"
    naive = x.replace(tzinfo=None).isoformat()
    return {"t": tag, "v": naive, "fold": x.fold, "tz": e.enc(x.tzinfo, d)}


def _enc_path(e: _Encoder, x: Any, d: int) -> Tagged:
    return {"t": "path", "type": type_name(_type(x)), "v": _path_str(x)}


def _dict_view(tag: str, ordered: bool) -> Callable[[_Encoder, Any, int], Tagged]:
    def encode_view(e: _Encoder, x: Any, d: int) -> Tagged:
        return {"t": tag, "v": e.seq(iter(x), d) if ordered else e.unordered(iter(x), d)}

    return encode_view


_ScalarFn = Callable[[_Encoder, Any], Tagged]
_CompoundFn = Callable[[_Encoder, Any, int], Tagged]


def _table(pairs: dict[type, Any]) -> dict[int, tuple[type, Any]]:
    return {_id(t): (t, fn) for t, fn in pairs.items()}


_SCALARS: dict[int, tuple[type, _ScalarFn]] = _table(
    {
        type(None): lambda e, x: {"t": "none"},
        bool: lambda e, x: {"t": "bool", "v": x is True},
        int: _enc_int,
        float: lambda e, x: {"t": "float", "v": _float_hex(x)},
        complex: _enc_complex,
        str: _enc_str,
        bytes: _enc_bytes,
        bytearray: lambda e, x: _enc_bytes(e, bytes(x), "bytearray"),
        type(NotImplemented): lambda e, x: {"t": "notimplemented"},
        type(Ellipsis): lambda e, x: {"t": "ellipsis"},
        range: lambda e, x: {"t": "range", "v": [_int_repr(n) for n in (x.start, x.stop, x.step)]},
        datetime.date: lambda e, x: {"t": "date", "v": x.isoformat()},
        datetime.timedelta: lambda e, x: {
            "t": "timedelta",
            "v": [x.days, x.seconds, x.microseconds],
        },
        decimal.Decimal: lambda e, x: {"t": "decimal", "v": _decimal_str(x)},
        types.ModuleType: lambda e, x: {"t": "module", "v": _module_name(x)},
        _LockType: lambda e, x: {"t": "lock", "held": _lock_locked(x)},
        _RLockType: lambda e, x: {"t": "rlock", "held": _rlock_repr(x).startswith("<locked ")},
    }
)
_COMPOUNDS: dict[int, tuple[type, _CompoundFn]] = _table(
    {
        list: lambda e, x, d: {"t": "list", "v": e.seq(list.__iter__(x), d)},
        tuple: lambda e, x, d: {"t": "tuple", "v": e.seq(tuple.__iter__(x), d)},
        set: lambda e, x, d: {"t": "set", "v": e.unordered(set.__iter__(x), d)},
        frozenset: lambda e, x, d: {"t": "frozenset", "v": e.unordered(frozenset.__iter__(x), d)},
        dict: lambda e, x, d: {"t": "dict", "v": e.pairs(_dict_items(x), d)},
        collections.OrderedDict: lambda e, x, d: {"t": "odict", "v": e.pairs(_odict_items(x), d)},
        collections.Counter: lambda e, x, d: {"t": "counter", "v": e.pairs(_dict_items(x), d)},
        collections.defaultdict: lambda e, x, d: {
            "t": "defaultdict",
            "factory": e.enc(_default_factory(x), d),
            "v": e.pairs(_dict_items(x), d),
        },
        collections.deque: lambda e, x, d: {
            "t": "deque",
            "maxlen": e.enc(_deque_maxlen(x), d),
            "v": e.seq(_deque_iter(x), d),
        },
        slice: lambda e, x, d: {"t": "slice", "v": e.seq((x.start, x.stop, x.step), d)},
        datetime.datetime: _enc_datetime,
        datetime.time: _enc_datetime,
        datetime.timezone: _enc_tz,
        functools.partial: lambda e, x, d: {
            "t": "partial",
            "func": e.enc(x.func, d),
            "args": e.enc(x.args, d),
            "kwargs": e.enc(x.keywords, d),
        },
        re.Pattern: lambda e, x, d: {"t": "pattern", "v": e.enc(x.pattern, d), "flags": x.flags},
        types.MethodType: lambda e, x, d: {
            "t": "boundmethod",
            "self": e.enc(x.__self__, d),
            "func": e.enc(x.__func__, d),
        },
        types.GeneratorType: lambda e, x, d: e.iterate(x, d),
        type({}.keys()): _dict_view("dict_keys", ordered=False),
        type({}.items()): _dict_view("dict_items", ordered=False),
        type({}.values()): _dict_view("dict_values", ordered=True),
        pathlib.PurePosixPath: _enc_path,
        pathlib.PosixPath: _enc_path,
        pathlib.PureWindowsPath: _enc_path,
        pathlib.WindowsPath: _enc_path,
    }
)
# Bases whose contents a subclass carries; the first one met along the subclass's MRO decides how
# its contents are read, through the base's own (native) methods, never the subclass's.
_SUB_BASES: dict[int, tuple[type, _CompoundFn]] = _table(
    {
        collections.OrderedDict: _COMPOUNDS[_id(collections.OrderedDict)][1],
        collections.defaultdict: _COMPOUNDS[_id(collections.defaultdict)][1],
        collections.Counter: _COMPOUNDS[_id(collections.Counter)][1],
        collections.deque: _COMPOUNDS[_id(collections.deque)][1],
        int: lambda e, x, d: _enc_int(e, int.__int__(x)),
        float: lambda e, x, d: {"t": "float", "v": _float_hex(float.__float__(x))},
        complex: lambda e, x, d: _enc_complex(e, x),
        str: lambda e, x, d: _enc_str(e, str.__str__(x)),
        bytes: lambda e, x, d: _enc_bytes(e, bytes.__bytes__(x)),
        bytearray: lambda e, x, d: _enc_bytes(
            e, bytes(bytearray.__getitem__(x, slice(None))), "bytearray"
        ),
        list: _COMPOUNDS[_id(list)][1],
        tuple: _COMPOUNDS[_id(tuple)][1],
        dict: _COMPOUNDS[_id(dict)][1],
        set: _COMPOUNDS[_id(set)][1],
        frozenset: _COMPOUNDS[_id(frozenset)][1],
    }
)


def encode(value: Any, limits: EncodeLimits | None = None, probes: Probes | None = None) -> Tagged:
    """The tagged encoding of one value; `toolarge` past the size budget, `opaque` on failure.
    With `probes` (a call's returned value), a function without a verified name is probed."""
    try:
        return _Encoder(limits or EncodeLimits(), probes).enc(value, 0)
    except _TooLarge:
        return {"t": "toolarge"}
    except BaseException as exc:
        if _type(exc) is _Timeout:
            raise
        return {"t": "opaque", "type": "<encode-error>"}


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
# a class's static and class methods: its dict holds the wrapper, whose `__func__` is the function
_METHOD_WRAPPERS = _table({staticmethod: None, classmethod: None})
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


# ---------------------------------------------------------------- a returned function, probed

_PROBED, _PROBE = wire.PROBED, wire.PROBE
_MAX_PROBES, _MAX_PROBED = wire.MAX_PROBES, wire.MAX_PROBED
_FROM_INPUT = 4  # probe values taken from the call's own arguments, before the fixed ones
_MAX_PROBE_ARITY = 3
_CO_VARARGS = 0x04  # inspect.CO_VARARGS, without importing inspect


def _fixed_probe_values() -> list[Any]:
    """Plain values every probe set ends with, in an order that mixes their types."""
    return [0, "a", None, [1, 2], 1, "", -1, (1,), 2.5, "abc", {}, True]


class Probes:
    """The arguments a returned function is probed with, drawn from one input alone: the plain
    values among the call's own arguments (copied before the call), then `_fixed_probe_values`;
    the same in the reference's run and a candidate's, whatever the hash seed."""

    __slots__ = ("left", "taken")

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.left = _MAX_PROBED
        self.taken: list[Any] = []
        for value in [*args, *[v for _, v in _dict_items(kwargs)]]:
            copy = _plain_copy(value, 0)
            if copy is not _MISSING and len(self.taken) < _FROM_INPUT:
                self.taken.append(copy)

    def calls(self, fn: Callable[..., Any]) -> list[list[Any]]:
        """Up to `_MAX_PROBES` argument lists of `fn`'s arity (one empty list for arity 0)."""
        values: list[Any] = []
        seen: set[str] = set()
        for value in [*self.taken, *_fixed_probe_values()]:
            key = _dumps(encode(value))
            if key not in seen:
                seen.add(key)
                values.append(value)
        arity = _arity(fn)
        if arity == 0:
            return [[]]
        values = values[:_MAX_PROBES]
        return [_alike(values, k, arity) for k in range(len(values))]


def _alike(values: list[Any], k: int, arity: int) -> list[Any]:
    """`values[k]` and, for a function of more arguments, the next values of its exact type
    (`values[k]` again where there are too few): a comparator gets (0, 1), ('a', '')..."""
    first = values[k]
    later = values[k + 1 :] + values[:k]
    same = [value for value in later if _type(value) is _type(first)]
    return [first] + [same[j] if j < len(same) else first for j in range(arity - 1)]


def _plain_copy(x: Any, depth: int) -> Any:
    """A copy of `x` if it is a small plain value (exact builtin types, no candidate code run),
    else `_MISSING`."""
    t = _type(x)
    if x is None or t is bool or t is float:
        return x
    if t is int:
        return x if -10_000 <= x <= 10_000 else _MISSING
    if t is str or t is bytes:
        return x if len(x) <= 200 else _MISSING
    if depth >= 2 or not (t is list or t is tuple or t is dict or t is set or t is frozenset):
        return _MISSING
    if len(x) > 16:
        return _MISSING
    if t is dict:
        pairs = [(_plain_copy(k, 3), _plain_copy(v, depth + 1)) for k, v in _dict_items(x)]
        if any(k is _MISSING or v is _MISSING for k, v in pairs):
            return _MISSING
        return dict(pairs)
    items = [_plain_copy(item, depth + 1) for item in _COPY_ITER[_id(t)](x)]
    return _MISSING if any(item is _MISSING for item in items) else t(items)


_COPY_ITER: dict[int, Callable[[Any], Iterator[Any]]] = {
    _id(list): list.__iter__,
    _id(tuple): tuple.__iter__,
    _id(set): set.__iter__,
    _id(frozenset): frozenset.__iter__,
}


def _fresh(call: list[Any]) -> list[Any]:
    """Copies of a probe's arguments (plain values), so no probe sees another's changes."""
    return [_plain_copy(value, 0) for value in call]


def _unnamed_function(x: Any) -> bool:
    """Whether `x` is a Python function (or a partial of one) whose name does not verify."""
    fn = x
    while _type(fn) is _Partial:
        fn = _partial_func(fn)
    return _type(fn) is _FunctionType and _callable_name(fn).startswith(_UNVERIFIED)


def _arity(fn: Any) -> int:
    """How many positional arguments a probe passes: the required ones (a partial's bound ones
    taken off), at most `_MAX_PROBE_ARITY`; one if it takes any at all, else none."""
    bound = 0
    while _type(fn) is _Partial:
        bound += len(_partial_args(fn))
        fn = _partial_func(fn)
    code = _function_code(fn)
    defaults = _function_defaults(fn)
    takes = _code_argcount(code) - bound
    required = takes - (len(defaults) if _type(defaults) is tuple else 0)
    if required > 0:
        return min(required, _MAX_PROBE_ARITY)
    return 1 if takes > 0 or _code_flags(code) & _CO_VARARGS else 0


# ---------------------------------------------------------------- JSON out


def _no_default(obj: Any) -> Any:
    raise TypeError("not a JSON value of the runner's frames")


# json's C encoder, captured before any candidate code runs: compact separators, no circularity
# check (frames are trees the runner built), nothing but exact builtin types is accepted. Its text
# is the same as `_write`'s, which stays as the fallback where `_json` is not compiled in.
_C_MAKE_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODE = (
    _C_MAKE_ENCODER(None, _no_default, _json_str, None, ":", ",", False, False, True)
    if _C_MAKE_ENCODER is not None
    else None
)
_str_join = "".join


def _dumps(obj: Any) -> str:
    if _C_ENCODE is not None:
        return _str_join(_C_ENCODE(obj, 0))
    out: list[str] = []
    _write(obj, out)
    return _str_join(out)


def _write(obj: Any, out: list[str]) -> None:
    t = _type(obj)
    if t is str:
        out.append(_json_str(obj))
    elif obj is None or t is bool:
        out.append("null" if obj is None else ("true" if obj else "false"))
    elif t is int:
        out.append(_int_repr(obj))
    elif t is float:
        out.append(float.__repr__(obj))
    elif t is list:
        out.append("[")
        for n, item in enumerate(obj):
            if n:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif t is dict:  # with str keys: the only other shape this module builds
        out.append("{")
        for n, (key, value) in enumerate(_dict_items(obj)):
            out.append(("," if n else "") + _json_str(key) + ":")
            _write(value, out)
        out.append("}")
    else:
        _no_default(obj)


class _Channel:
    def __init__(self, fd: int, nonce: str) -> None:
        self.fd = fd
        self.prefix = nonce + " "

    def frame(self, frame: Mapping[str, Any]) -> str:
        return self.prefix + _dumps(frame) + "\n"

    def write(self, text: str) -> None:
        if _getpid() != _PID[0]:  # a forked child of the candidate never speaks for us
            _os_exit(0)
        data = text.encode("ascii")
        try:
            while data:
                data = data[_os_write(self.fd, data) :]
        except OSError:
            _os_exit(3)

    def send(self, frame: wire.Frame) -> None:
        self.write(self.frame(frame))

    def call(self, index: int) -> str:
        return self.prefix + _CALL_HEAD + _int_repr(index) + "}\n"

    def result(self, index: int, outcome: dict[str, Any]) -> str:
        """The frame of one input's outcome (written with the next call frame: one write)."""
        try:
            return self.frame({"event": _RESULT, "i": index, "outcome": outcome})
        except (RecursionError, MemoryError, TypeError, ValueError):
            outcome = {"status": _RUNNER_ERROR, "msg": "outcome could not be written"}
            return self.frame({"event": _RESULT, "i": index, "outcome": outcome})


# ---------------------------------------------------------------- running


def _timed(work: Callable[[], dict[str, Any]], timeout: float) -> dict[str, Any]:
    """Run `work` with SIGALRM armed; its result with elapsed `t`, or a timeout outcome."""
    with _AlarmRegion():
        return _armed(work, timeout)


class _AlarmRegion:
    """SIGALRM unblocked (our handler installed) inside, blocked and disarmed outside: no
    timeout is ever raised in the runner's own code between inputs.  The timer is left running
    on the way out (one syscall fewer per call): an alarm it raises later stays pending while
    blocked and meets our handler, disarmed, when the next region opens; each `_armed` sets
    the timer afresh."""

    def __enter__(self) -> None:
        _signal(_SIGALRM, _on_alarm)  # first: an alarm pending from candidate code hits ours,
        _Alarm.armed = False  # disarmed, and is dropped
        _sigmask(_SIG_UNBLOCK, _ALRM)

    def __exit__(self, *exc: object) -> None:
        _sigmask(_SIG_BLOCK, _ALRM)
        _Alarm.armed = False


def _armed(work: Callable[[], dict[str, Any]], timeout: float) -> dict[str, Any]:
    """`_timed` inside an alarm region (several of these share one region's two mask calls)."""
    start = _perf()
    result: dict[str, Any] | None = None
    try:
        _signal(_SIGALRM, _on_alarm)  # again each time: the candidate may have replaced it
        _Alarm.fired = False
        _Alarm.armed = True
        _setitimer(_ITIMER_REAL, timeout, 0.05)  # re-fires if the candidate swallows it
        result = work()
        _Alarm.armed = False  # a late alarm from here on is ignored by the handler
    except _Timeout:
        _Alarm.armed = False
    elapsed = round(_perf() - start, 6)
    if result is None or _Alarm.fired or elapsed > timeout:  # SIGALRM may have been ignored
        return {"status": _TIMEOUT, "t": elapsed}
    result["t"] = elapsed
    return result


def _call(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    lim: EncodeLimits,
    shown: dict[str, Any] | None = None,
) -> Callable[[], dict[str, Any]]:
    def work() -> dict[str, Any]:
        before: dict[str, Any] = {}
        if shown is not None and shown["status"] == "loaded":
            # For rendering the call at gen time: a second copy of the input, so encoding it
            # (which consumes iterators) leaves the arguments of the real call untouched.
            before["args_in"] = [encode(a, lim) for a in shown["args"]]
            before["kwargs_in"] = {k: encode(v, lim) for k, v in _dict_items(shown["kwargs"])}
            if "ctor_in" in shown:
                before["ctor_in"] = shown["ctor_in"]
        probes = Probes(args, kwargs)  # drawn before the call can change its arguments
        try:
            if _RANDOM_STATE:
                _SET_RANDOM_STATE(_RANDOM_STATE[0])
            value = fn(*args, **kwargs)
            if _type(value) is _CoroutineType:
                value = _drive(value)
            out: dict[str, Any] = {"status": _RETURNED, "value": encode(value, lim, probes)}
        except BaseException as exc:
            if _type(exc) is _Timeout:
                raise
            out = {"status": _RAISED, "exc": exception_record(exc)}
        out["args"] = [encode(a, lim) for a in args]
        out["kwargs"] = {k: encode(v, lim) for k, v in _dict_items(kwargs)}
        out.update(before)
        return out

    return work


def _drive(coro: Any) -> Any:
    import asyncio  # only for async targets

    return asyncio.run(coro)


def _unpack(data: bytes, shown: Callable[[Any, Any], None] | None = None) -> Any:
    """`(args, kwargs)` from an input's pickle, building the call a recipe describes; `shown`
    sees a recipe's class-call arguments before `self` is built from them."""
    loaded = _pickle_loads(data)
    if _type(loaded) is not tuple or len(loaded) not in (4, 8) or _type(loaded[0]) is not str:
        return loaded
    if loaded[0] == _RECIPE and len(loaded) == 4:
        _, seed, positional, keywords = loaded
        ctor: Any = None
        build: Any = False
        c_positional: Any = {}
        c_keywords: Any = {}
    elif loaded[0] == _RECIPE_CTOR and len(loaded) == 8:
        _, seed, ctor, build, positional, keywords, c_positional, c_keywords = loaded
    else:
        raise TypeError("an input must be (args tuple, kwargs dict) or a recipe")
    if _type(seed) is not bytes:
        raise TypeError("a recipe's seed is the pickled call")
    args, kwargs = _replaced(_pickle_loads(seed), positional, keywords)
    if _type(ctor) is bytes and args:
        c_args, c_kwargs = _replaced(_pickle_loads(ctor), c_positional, c_keywords)
        if shown is not None:
            shown(c_args, c_kwargs)
        if build is True:
            args = (_type(args[0])(*c_args, **c_kwargs), *args[1:])
    return args, kwargs


def _replaced(call: Any, positional: Any, keywords: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The pickled call `(args, kwargs)` with a recipe's arguments replaced."""
    if _type(positional) is not dict or _type(keywords) is not dict:
        raise TypeError("a recipe replaces arguments by position and by keyword")
    args, kwargs = call
    args, kwargs = list(args), dict(kwargs)
    for position, value in _dict_items(positional):
        if _type(position) is not int or not 0 <= position < len(args):
            raise TypeError("a recipe replaces an argument the seed call does not have")
        args[position] = value
    for name, value in _dict_items(keywords):
        kwargs[str(name)] = value
    return tuple(args), kwargs


def _load(blob: str, lim: EncodeLimits | None = None) -> Callable[[], dict[str, Any]]:
    """Load one input; with `lim`, a recipe's class-call arguments are reported as `ctor_in`."""

    def work() -> dict[str, Any]:
        ctor_in: dict[str, Any] = {}

        def shown(c_args: Any, c_kwargs: Any) -> None:
            if lim is not None:
                ctor_in["args"] = [encode(a, lim) for a in c_args]
                ctor_in["kwargs"] = {k: encode(v, lim) for k, v in _dict_items(c_kwargs)}

        try:
            try:
                args, kwargs = _unpack(_a2b_base64(blob), shown)
            finally:
                _name_by_value()
            if _type(args) is list:
                args = tuple(args)
            if _type(args) is not tuple or _type(kwargs) is not dict:
                raise TypeError("an input must be (args tuple, kwargs dict)")
        except BaseException as exc:
            if _type(exc) is _Timeout:
                raise
            return {"status": _LOAD_ERROR, "msg": _exc_summary(exc)}
        loaded = {"status": "loaded", "args": args, "kwargs": kwargs}
        if ctor_in:
            loaded["ctor_in"] = ctor_in
        return loaded

    return work


def _exc_summary(exc: BaseException) -> str:
    record = exception_record(exc)
    return (record["type"] + ": " + record["msg"])[:_MSG_CAP]


def _target(module_name: str, qualname: str) -> Callable[..., Any]:
    random.seed(0)  # before the candidate's module runs
    _RANDOM_STATE[:] = [random.getstate()]
    owner: Any = _import_module(module_name)
    *owner_path, name = qualname.split(".")
    for part in owner_path:
        owner = getattr(owner, part)
    return getattr(owner, name)


# ---------------------------------------------------------------- repository code, compiled


_BYTECODE: dict[str, tuple[int, int, bytes]] = {}


class _CompiledLoader(importlib.machinery.SourceFileLoader):
    """A source loader that takes a repository module's code from the host-compiled table
    (replicate.jail.bytecode) while its source's size and mtime match; the candidate's file
    and the target's are never in the table, so they always compile from source."""

    def get_code(self, fullname: str) -> Any:
        entry = _BYTECODE.get(self.path)
        if entry is not None:
            st = _os_stat(self.path)
            if (st.st_size, st.st_mtime_ns) == (entry[0], entry[1]):
                return _marshal_loads(entry[2])
        return super().get_code(fullname)

    def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> Any:  # type: ignore[override]
        plain = _optimize == -1 and _type(data) is bytes
        held = _HELD[0] if _HELD and plain else None
        code = _held_code(held, data, path) if held is not None else None
        if code is None and _SHIPPED and plain and path == _SHIPPED[0]:
            code = _shipped_code(data, _SHIPPED[1])
        return code if code is not None else super().source_to_code(data, path, _optimize=_optimize)


# ------------------------------------------------ a session's programs, compiled once

# Gen's session runs the same target file many times: the original (each golden run, search,
# re-grade) and its mutants and degenerate programs, each differing from the original inside one
# top-level statement.  Compiling the whole file is most of a child's import (12-25 ms for a
# large module).  So the session's runner compiles a program it has been sent twice, once, before
# forking (`_Held.offer`), and a child importing the target's file takes that code when its bytes
# are the same, or compiles only the top-level statement its bytes differ in and puts that into a
# copy of the held module code (`_patched`), checked against the held code's own statement, else
# compiles the file as a fresh runner does.  The code is the file's compile in everything
# `code.__eq__` compares, with two differences no result shows: equal constants of the patched
# statement are other objects than the module's (compile shares them across a module), and the
# module-level instructions of the changed statement keep the original's end line and column.


class _Held:
    """The program a session has been sent most often (at least twice), compiled, with where
    its top-level function and class statements lie."""

    __slots__ = ("code", "counts", "flags", "imported", "lines", "path", "source", "statements")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.source = b""
        self.path = ""
        self.code: Any = None
        self.lines: list[bytes] = []
        self.statements: list[tuple[int, int, int]] = []  # (index in co_consts, first, last)
        self.imported = b""  # `import` of the names the module's own imports bind, or nothing
        self.flags = 0  # the module's `__future__` features, for compiling one statement alone

    def offer(self, path: str, source: bytes) -> None:
        """Note a program the session is about to run from `path`; compile it once it is the
        most frequent (best effort: a warning or an error at compile leaves it to the child)."""
        key = hash(source)
        seen = self.counts[key] = self.counts.get(key, 0) + 1
        if len(self.counts) > 4096:
            self.counts = {key: seen}
        if source == self.source or seen < 2 or seen <= self.counts.get(hash(self.source), 0):
            return
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                code = compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        if not caught:
            self.source, self.path, self.code = source, path, code
            self.lines = source.split(b"\n")
            self.statements = _statements(code, len(self.lines), source)
            self.imported = _imported(source, path)
            self.flags = code.co_flags & _future_flags()


_HELD: list[_Held] = []  # the session's, in the runner of a session only
_SHIPPED: list[str] = []  # a candidates' session: the target's file, the host's code for it


def _shipped_code(data: bytes, code_file: str) -> Any:
    """The host's code for `data` (replicate.jail.bytecode.shipped_code), or None: no file, of
    another interpreter, or of other source."""
    try:
        with open(code_file, "rb") as handle:
            blob = handle.read()
    except OSError:
        return None
    magic = importlib._bootstrap_external.MAGIC_NUMBER
    size = int.from_bytes(blob[4:12], "little")
    if blob[:4] != magic or blob[12 : 12 + size] != data:
        return None
    try:
        return _marshal_loads(blob[12 + size :])
    except (ValueError, EOFError, TypeError):
        return None


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]")  # an encoding declaration (PEP 263)


def _statements(module: Any, final: int, source: bytes) -> list[tuple[int, int, int]]:
    """Each function or class statement at the top of `module`: its code's index in the
    module's constants, its first line, and the line before the next module-level statement
    (its comments and blank lines with it); none for a file with an encoding mark."""
    head = source.split(b"\n", 2)[:2]
    if source.startswith(b"\xef\xbb\xbf") or any(_CODING.match(line) for line in head):
        return []
    starts = sorted({line for _, _, line in module.co_lines() if line is not None})
    found = []
    for index, const in enumerate(module.co_consts):
        if _type(const) is types.CodeType:
            first, last = _lines_of(const)
            after = bisect.bisect_right(starts, last)  # the next statement's first line
            found.append((index, first, starts[after] - 1 if after < len(starts) else final))
    return found


def _future_flags() -> int:
    """Every `__future__` feature's compiler flag (the session's runner only, not each jail)."""
    import __future__

    flags = 0
    for feature in __future__.all_feature_names:
        flags |= getattr(__future__, feature).compiler_flag
    return flags


def _imported(source: bytes, path: str) -> bytes:
    """One `import` statement binding every name the module's own imports bind: compiled
    before a statement alone, so its functions compile as in the module (a method call on an
    imported module is compiled differently from one on any other name)."""
    import symtable  # the session's runner only, once per program it holds

    try:
        top = symtable.symtable(source.decode("utf-8"), path, "exec")
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return b""
    names = sorted(n for n in top.get_identifiers() if top.lookup(n).is_imported())
    return ("import " + ", ".join(names)).encode("utf-8") if names else b""


def _held_code(held: _Held, data: bytes, path: str) -> Any:
    """The code for `data` from `path` taken from the held program, or None (compile it)."""
    if path != held.path or held.code is None:
        return None
    if data == held.source:
        return held.code
    try:
        return _patched(held, data, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _patched(held: _Held, data: bytes, path: str) -> Any:
    """The held module code with the one top-level statement `data` differs in compiled from
    `data`; None unless the difference lies inside one function or class statement whose lines
    are the same in number, and compiling that statement of the held source alone gives the held
    code for it and the same module-level code as `data`'s (but where it ends)."""
    base, module = held.source, held.code
    if data.count(b"\n") != base.count(b"\n"):
        return None
    start = _common_prefix(base, data)
    end = len(base) - _common_prefix(base[start:][::-1], data[start:][::-1])
    first, last = base.count(b"\n", 0, start) + 1, base.count(b"\n", 0, end) + 1
    found = [(n, lo, hi) for n, lo, hi in held.statements if lo <= first and last <= hi]
    if len(found) != 1:
        return None
    index, lo, hi = found[0]
    flags = held.flags
    pad = held.imported + b"\n" * (lo - 1) if held.imported and lo > 1 else b"\n" * (lo - 1)
    old = compile(pad + b"\n".join(held.lines[lo - 1 : hi]), path, "exec", flags, True)
    new = compile(pad + b"\n".join(data.split(b"\n")[lo - 1 : hi]), path, "exec", flags, True)
    at = [n for n, c in enumerate(old.co_consts) if _type(c) is types.CodeType]
    if len(at) != 1 or not _same_code(old.co_consts[at[0]], module.co_consts[index]):
        return None
    j, replaced = at[0], new.co_consts[at[0]] if len(new.co_consts) > at[0] else None
    if _type(replaced) is not types.CodeType:
        return None
    probe = old.replace(co_consts=(*old.co_consts[:j], replaced, *old.co_consts[j + 1 :]))
    if not _same_but_ends(probe, new):
        return None  # the statement's own module-level code differs (a default, a decorator)
    consts = module.co_consts
    return module.replace(co_consts=(*consts[:index], replaced, *consts[index + 1 :]))


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share (by halving: each step one C comparison)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _same_but_ends(a: Any, b: Any) -> bool:
    """Whether two module codes are equal but for where their statements end (a changed
    definition ends at another line and column; only a traceback's marks could show it)."""
    starts = [(p[0], p[2]) for p in a.co_positions()] == [(p[0], p[2]) for p in b.co_positions()]
    return starts and a.replace(co_linetable=b.co_linetable) == b


def _same_code(a: Any, b: Any) -> bool:
    """Whether two code objects are equal, the code they hold compared the same way (`==`
    compares held code objects by identity)."""
    inner_a = [n for n, c in enumerate(a.co_consts) if _type(c) is types.CodeType]
    inner_b = [n for n, c in enumerate(b.co_consts) if _type(c) is types.CodeType]
    if inner_a != inner_b:
        return False
    masked_a = tuple(None if n in inner_a else c for n, c in enumerate(a.co_consts))
    masked_b = tuple(None if n in inner_b else c for n, c in enumerate(b.co_consts))
    if a.replace(co_consts=masked_a) != b.replace(co_consts=masked_b):
        return False
    return all(_same_code(a.co_consts[n], b.co_consts[n]) for n in inner_a)


def _lines_of(code: Any) -> tuple[int, int]:
    """The first and last line of a code object and the code it holds."""
    lines = [line for _, _, line in code.co_lines() if line is not None]
    for inner in code.co_consts:
        if _type(inner) is types.CodeType:
            lines.extend(_lines_of(inner))
    return code.co_firstlineno, max(lines, default=code.co_firstlineno)


def _use_bytecode(table_path: str, roots: list[str]) -> None:
    """Serve the modules under `roots` from the table at `table_path` (best effort)."""
    try:
        with open(table_path, "rb") as handle:
            table = _marshal_loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return
    if _type(table) is not dict:
        return
    _BYTECODE.update(table)
    machinery = importlib.machinery
    finder_for = machinery.FileFinder.path_hook(
        (_CompiledLoader, machinery.SOURCE_SUFFIXES),
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES),
    )
    under = tuple(root.rstrip("/") + "/" for root in roots)

    def hook(entry: str) -> Any:
        if entry in roots or entry.startswith(under):
            return finder_for(entry)
        raise ImportError("not a repository path")

    sys.path_hooks.insert(0, hook)


def _prepare(setup: wire.Setup) -> None:
    _PID[:] = [_getpid()]
    _set_int_digits(0)
    _sigmask(_SIG_BLOCK, _ALRM)
    for name, mod in list(_sys_modules.items()):
        if _type(mod) is _ModuleType:
            _SNAPSHOT[name] = dict(_module_dict(mod))
    roots = [str(p) for p in setup.get("sys_path", ())]
    bytecode = setup.get("bytecode")
    if bytecode is not None and _type(bytecode) is str:
        _use_bytecode(bytecode, roots)
    _sys_path[0:0] = roots
    for site_dir in setup.get("site_dirs", ()):
        _addsitedir(str(site_dir))
    by_value = setup.get("by_value")
    _BY_VALUE[:] = [by_value] if _type(by_value) is str else []


_BY_VALUE: list[str] = []  # cloudpickle's module file, when the host shipped it
BY_VALUE_MODULE = wire.BY_VALUE_MODULE


_BY_VALUE_MADE: list[object] = []  # functions and classes the last input's pickle rebuilt
_BY_VALUE_FACTORIES = ("_make_function", "_make_skeleton_class", "_make_skeleton_enum")
BY_VALUE_PREFIX = "<by value>"


def _recording(factory: Callable[..., object]) -> Callable[..., object]:
    def make(*args: Any, **kwargs: Any) -> object:
        made = factory(*args, **kwargs)
        _BY_VALUE_MADE.append(made)
        return made

    return make


def _name_by_value() -> None:
    """Name what an input's unpickling rebuilt by value, `<by value>module.qualname#k` (k: the
    order it was made in): the reference's run and a candidate's rebuild the same objects in
    the same order, so an outcome holding one (a key function returned, a state keeping it)
    compares by that name.  The name is the object's by identity, like any alias: another
    object claiming the qualname gets none."""
    for k, made in enumerate(_BY_VALUE_MADE):
        if _issubclass(_type(made), type):
            module, qualname = _type_module(made), _type_qualname(made)
        elif _type(made) is types.FunctionType:
            module, qualname = _function_module(made), _function_qualname(made)
        else:
            continue
        _ALIASES[_id(made)] = (made, f"{BY_VALUE_PREFIX}{module}.{qualname}#{k}")
    _BY_VALUE_MADE.clear()


def _load_by_value() -> None:
    """Load the by-value module the inputs' pickles name (replicate.jail.byvalue), before
    any code of the repository runs; without it, those inputs fail to load, one by one."""
    if not _BY_VALUE or BY_VALUE_MODULE in _sys_modules:
        return
    path = _BY_VALUE[0]
    module = types.ModuleType(BY_VALUE_MODULE)
    module.__file__ = path
    try:
        code = importlib.machinery.SourceFileLoader(BY_VALUE_MODULE, path).get_code(BY_VALUE_MODULE)
        if code is None:
            return
        _sys_modules[BY_VALUE_MODULE] = module
        exec(code, module.__dict__)  # our own shipped module, not the candidate's
        for name in _BY_VALUE_FACTORIES:
            factory = _dict_get(module.__dict__, name)
            if _type(factory) is types.FunctionType:
                module.__dict__[name] = _recording(factory)
    except Exception:  # noqa: BLE001 - the inputs that need it report their own failure
        _dict_pop(_sys_modules, BY_VALUE_MODULE, None)


def run(job: wire.Job) -> None:
    """Run one parsed job, writing frames to its `channel_fd`; ends the process."""
    channel = _Channel(int(job.get("channel_fd", 3)), str(job["nonce"]))
    lim = EncodeLimits(int(job["max_items"]), int(job["max_depth"]), int(job["max_bytes"]))
    timeout = float(job["call_timeout_s"])
    load_timeout = max(timeout, _LOAD_TIMEOUT_S)
    encode_inputs = job.get("encode_inputs") is True
    inputs = [(int(item["i"]), str(item["pickle_b64"])) for item in job["inputs"]]
    module_name, qualname = str(job["module"]), str(job["qualname"])
    channel.send({"event": _STARTED})  # before any code of the repository runs
    if job.get("by_value") is True:
        _load_by_value()
    _with_made_packages()
    try:
        fn = _target(module_name, qualname)
    except BaseException as exc:  # noqa: BLE001 - whatever the import raises is the candidate's
        record = exception_record(exc)
        msg = record["msg"][:_MSG_CAP]
        channel.send({"event": _IMPORT_ERROR, "type": record["type"], "msg": msg})
        _os_exit(0)
    channel.send({"event": _READY})
    with _AlarmRegion():  # one region for all the loads: two mask calls, not two per input
        reported = lim if encode_inputs else None
        loaded = [(i, _load_input(blob, load_timeout, reported)) for i, blob in inputs]
    channel.send({"event": _LOADED})  # the host times the first call from here
    pending = ""  # the results since the last call, written together with the next call frame
    first_timeout = job.get("until_timeout") is True
    for index, (item, shown) in loaded:
        if item["status"] == "loaded":
            work = _call(fn, item["args"], item["kwargs"], lim, shown)
            channel.write(pending + channel.call(index))  # the host times the call from here
            pending = ""
            item = _timed(work, timeout)
        pending += channel.result(index, item)
        if first_timeout and item["status"] == _TIMEOUT:
            break  # a program of a series that loops costs one call's limit, not the run's
    channel.write(pending + channel.frame({"event": _DONE}))
    _os_exit(0)


def _load_input(
    blob: str, timeout: float, lim: EncodeLimits | None
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """An input's arguments, and with `lim` (the inputs are to be reported) a second copy."""
    loaded = _armed(_load(blob), timeout)
    wanted = lim is not None and loaded["status"] == "loaded"
    shown = _armed(_load(blob, lim), timeout) if wanted else None
    return loaded, shown


def run_session(session: wire.Session) -> None:
    """Run programs (gen's own, or candidates' with ``candidates``: see
    `replicate.jail.session`), each in a child forked from this process, one request after
    another: a request (a line of JSON on the inherited ``requests_fd`` pipe) holds a job,
    which the child runs as `run` does, and for gen's programs names a program file, copied
    over the target's file (bound writable for this; the host writes candidates' itself).  Once
    the child has exited, been killed at the request's time limit or by a ``kill`` request,
    this process kills what the child left running, empties /tmp and /dev/shm (so the next
    child finds the jail as a fresh one would be) and writes an ``exited`` frame under the
    run's nonce, marked.  Ends the process at an ``end`` request or when the pipe closes; at
    once, when a session for candidates cannot be sealed."""
    fd = int(session.get("channel_fd", 3))
    requests = _Requests(int(session["requests_fd"]))
    sealed = _seal()
    if session.get("candidates") is True and not sealed:
        _os_exit(_UNSEALED)  # the host grades its candidates in jails of their own instead
    residue = session.get("pid_residue")
    own_pids = session.get("own_pids") is True
    _preload(session.get("preload"), requests.fd, own_pids)
    gc.collect()
    gc.freeze()  # the children inherit every object: a collection there need not visit them
    held = _Held()
    if session.get("candidates") is not True:  # candidates' sessions: each file compiled anew
        _HELD[:] = [held]
    elif _type(session.get("code_file")) is str:  # or by the host
        _SHIPPED[:] = [str(session["file"]), str(session["code_file"])]
    while True:
        request = requests.next()
        if request is None or request.get("end") is True:
            _os_exit(0)
        if "k" not in request:
            continue  # a kill for a child already gone
        if "program" in request:  # else the host wrote it, the file is read-only here
            with open(request["program"], "rb") as source, open(session["file"], "r+b") as target:
                program = source.read()
                target.truncate(0)  # same inode: the bind shows it
                target.write(program)
            held.offer(str(session["file"]), program)
        job = request["job"]
        if job.get("by_value") is True:
            _load_by_value()  # our own shipped module: once here, not once per child
        if _type(residue) is int:
            _align_pid(residue, requests.fd)
        started = time.monotonic()
        deadline = started + float(request["timeout_s"])
        child = _fork_job(job, requests.fd)
        status, timed_out = _reap(child, deadline, requests, request["k"], own_pids)
        frame = {"event": _EXITED, "k": request["k"], "status": status, "timed_out": timed_out}
        channel = _Channel(fd, wire.EXITED_MARK + str(job["nonce"]))  # only this run knew it
        channel.write("\n" + channel.frame({**frame, "s": time.monotonic() - started}))


# ------------------------------------------- what every child would import, imported once

# A child imports the target's module as a fresh runner would, and with it the modules of its
# package the package's ``__init__`` imports: most of a short run, the same in every child.  The
# host names those a session may import before its first child (replicate.jail.preload: outside
# modules, then the target's siblings): not the target's module, nor its packages' ``__init__``
# (which import it); the packages are made from their specs without running their code.  A child
# first tries them (`_trial`): the target's module blocked, each imported or undone (with every
# module its import brought in), kept only if it raised nothing, left no thread and drew nothing
# from `random`; the session imports those it kept.  Each child then
# takes the packages out of `sys.modules` and imports the target as a fresh runner would: the
# packages' own objects (holding their preloaded submodules) come back through `_MadePackages`,
# their ``__init__`` run in the child, the target's module compiled from its file.

_PRELOAD_S = 20.0  # the trial's limit: past it, nothing is preloaded
_MADE: list[tuple[str, Any, Any]] = []  # (name, module, loader): the target's packages


class _Blocked:
    """A meta path finder that refuses the target's module while the session preloads."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == self.name:
            raise ImportError(f"{name} is not imported before a session's children")


class _MadeLoader:
    """A package made at preload: its own object, its ``__init__`` run by its loader."""

    def __init__(self, module: Any, loader: Any) -> None:
        self.module, self.loader = module, loader

    def create_module(self, spec: Any) -> Any:
        return self.module

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # resources and the rest: the real loader's
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)


class _MadePackages:
    """A meta path finder that gives each preloaded package back to a child's import."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        for made, module, loader in _MADE:
            if made == name:
                spec = importlib.machinery.ModuleSpec(
                    name,
                    _MadeLoader(module, loader),  # type: ignore[arg-type]
                    origin=module.__spec__.origin,
                )
                spec.submodule_search_locations = module.__spec__.submodule_search_locations
                spec.has_location = module.__spec__.has_location
                return spec
        return None


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return _thread._count() + 1


def _import_kept(preload: wire.Preload, names: list[str]) -> list[str]:
    """Import the target's packages (made, not run) and then `names`, undoing each that fails
    the checks; the names kept."""
    for name in preload["packages"]:
        parent = _sys_modules.get(name.rpartition(".")[0])
        spec = importlib.machinery.PathFinder.find_spec(name, getattr(parent, "__path__", None))
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return []
        module = importlib.util.module_from_spec(spec)
        _sys_modules[name] = module
        _MADE.append((name, module, spec.loader))
    kept: list[str] = []
    for name in names:
        before, state, threads = set(_sys_modules), _GET_RANDOM_STATE(), _threads()
        try:
            _import_module(name)
            clean = _GET_RANDOM_STATE() == state and _threads() == threads
        except Exception:  # noqa: BLE001 - a module that cannot come first is left to the child
            clean = False
        if clean:
            kept.append(name)
        else:
            _SET_RANDOM_STATE(state)
            _undo([n for n in _sys_modules if n not in before])
    return kept


def _undo(names: list[str]) -> None:
    """Forget the modules `names` (and their parents' attributes for them): a module that
    failed a check, and every module its import brought in, which a later one would otherwise
    find imported (a module that draws from `random`, say, imported by a clean one)."""
    for name in names:
        module = _sys_modules.pop(name, None)
        if module is None:
            continue
        parent, _, leaf = name.rpartition(".")
        holder = _sys_modules.get(parent)
        if holder is not None and getattr(holder, leaf, None) is module:
            delattr(holder, leaf)


def _preload(preload: wire.Preload | None, requests_fd: int, own_pids: bool) -> None:
    """Import what the trial in a child kept, in the session's own process (see above)."""
    if not preload or not preload.get("modules"):
        return
    import importlib.util  # noqa: F401 - a session's only, for module_from_spec

    blocked = _Blocked(str(preload["target"]))
    sys.meta_path.insert(0, blocked)
    try:
        kept = _trial(preload, requests_fd, own_pids)
        if kept:
            _import_kept(preload, kept)
    finally:
        sys.meta_path.remove(blocked)
    if _MADE:
        sys.meta_path.insert(0, _MadePackages())


def _trial(preload: wire.Preload, requests_fd: int, own_pids: bool) -> list[str]:
    """The modules a child could import cleanly, in order; [] when it failed or was late."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(requests_fd)
            os.close(read_fd)
            kept = _import_kept(preload, list(preload["modules"]))
            os.write(write_fd, "\n".join(kept).encode())
        finally:
            _os_exit(0)
    os.close(write_fd)
    data = b""
    deadline = time.monotonic() + _PRELOAD_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([read_fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(read_fd, 1 << 16) if ready else b""
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read_fd)
        try:  # noqa: SIM105 - as above
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
        _tidy(own_pids)
    names = set(preload["modules"])
    return [name for name in data.decode("utf-8", "replace").split("\n") if name in names]


def _with_made_packages() -> None:
    """In a child: the preloaded packages out of `sys.modules`, so the target's import runs
    their ``__init__`` (`_MadePackages` gives back their objects)."""
    for name, _, _ in _MADE:
        _sys_modules.pop(name, None)


class _Requests:
    """A session's requests, one JSON object per line of a pipe."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""
        self.lines: list[Any] = []

    def next(self) -> dict[str, Any] | None:
        """The next request, waiting for it; None once the pipe has closed."""
        while not self.lines:
            if not self.read():
                return None
        return self.lines.pop(0)

    def read(self) -> bool:
        """Take what the pipe holds (one read); False at its end."""
        chunk = os.read(self.fd, 1 << 16)
        *whole, self.buffer = (self.buffer + chunk).split(b"\n")
        self.lines += [_json_loads(line) for line in whole if line.strip()]
        return bool(chunk)


def _fork_job(job: wire.Job | None, requests_fd: int) -> int:
    """A child that runs `job` as a fresh runner would (in its own process group), or exits at
    once without one; its pid."""
    pid = os.fork()
    if pid == 0:
        try:
            os.close(requests_fd)
            _PID[:] = [_getpid()]
            os.setpgid(0, 0)
            if _DUMPABLE:
                _DUMPABLE[0](_PR_SET_DUMPABLE, 1, 0, 0, 0)  # as any process is; the session is not
            if job is not None:
                run(job)
        finally:
            _os_exit(70)  # never back into the session's loop
    try:  # noqa: SIM105 - contextlib is one import more in every jail
        os.setpgid(pid, pid)  # whichever of the two runs first
    except OSError:  # the child has run (and may have exited) already
        pass
    return pid


def _align_pid(residue: int, requests_fd: int) -> None:
    """Start and reap children that exit at once until the next pid is `residue` modulo
    wire.PID_MODULUS (see replicate.jail.session: pids); nothing else forks here then, as the
    last child's leftovers are killed."""
    last = _last_pid()
    for _ in range(2 * wire.PID_MODULUS):
        if last is not None and (last + 1) % wire.PID_MODULUS == residue:
            return
        if last is not None:
            last = _spend_pid()
        else:  # the kernel does not tell: a child's pid says it
            last = _fork_job(None, requests_fd)
            os.waitpid(last, 0)


_NO_PROGRAM = "/proc/0/replicate"  # no process 0 in /proc, and nothing can make one


def _spend_pid() -> int | None:
    """Use up one pid as cheaply as the kernel allows: a spawn whose program does not exist is
    a child sharing this process's memory (no page tables copied) that exits at its failed exec
    and is reaped by the C library (~0.1 ms; forking this runner and reaping it took ~1.5 ms,
    three times in most runs of a gen session).  The last pid given out, after it."""
    try:
        pid = os.posix_spawn(_NO_PROGRAM, [_NO_PROGRAM], {})
    except OSError:  # the exec failed, as it must: the child is gone already
        return _last_pid()
    os.waitpid(pid, 0)  # never here in practice
    return pid


def _last_pid() -> int | None:
    """The last pid given out in this pid namespace, where the kernel tells it."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as handle:
            return int(handle.read())
    except (OSError, ValueError):
        return None


def _reap(
    pid: int, deadline: float, requests: _Requests, k: object, own_pids: bool
) -> tuple[int, bool]:
    """Wait for a session's child until `deadline` or a ``kill`` request for it, then kill its
    group and whatever else it left; its exit code (128 + N for signal N) and whether the
    deadline killed it."""
    pidfd = os.pidfd_open(pid)
    timed_out = False
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([pidfd, requests.fd], [], [], max(left, 0.0))
            if pidfd in ready:
                break
            killed = not ready or not requests.read() or {"kill": k} in requests.lines
            if killed:
                timed_out = not ready
                _kill_group(pid)
                break
    finally:
        os.close(pidfd)
    _, status = os.waitpid(pid, 0)
    _tidy(own_pids)
    code = os.waitstatus_to_exitcode(status)
    return (128 - code if code < 0 else code), timed_out


def _kill_group(pid: int) -> None:
    try:  # noqa: SIM105 - as above
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _tidy(own_pids: bool) -> None:
    """After a child: every other process of the jail's pid namespace killed (but its init and
    this one), /tmp and /dev/shm emptied.  With `own_pids` (the jail has a pid namespace of its
    own) by ``kill(-1, SIGKILL)``, which no fork can slip past; else by pid, pass after pass.
    Either repeats until no process is left; one that will not go ends the session, so nothing a
    child left can meet the next child."""
    mine = {1, _getpid()}
    for attempt in range(_SWEEPS):
        others = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        others = [pid for pid in others if pid not in mine and not _gone(pid)]
        if not others:
            break
        for pid in [-1] if own_pids else others:
            try:  # noqa: SIM105 - as above
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.001 * attempt)
    else:
        _os_exit(_UNCLEAN)
    for folder in ("/tmp", "/dev/shm"):
        _empty(folder)


_SWEEPS = 200
_UNCLEAN = 72  # a process outlived every sweep: the session ends


def _gone(pid: int) -> bool:
    """Whether `pid` is a zombie (dead, waiting for its init to reap it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] in (b"Z", b"X")


_PR_SET_DUMPABLE = 4
_UNSEALED = wire.UNSEALED_EXIT  # the session ends: the host runs jails of their own instead
_DUMPABLE: list[Any] = []  # prctl, kept from `_seal` for the children


def _seal() -> bool:
    """Keep the session's process out of its children's reach: it is not dumpable, so a child of
    the same user can neither read its memory nor open its descriptors (the requests pipe among
    them) through /proc, nor trace it.  ctypes is imported for prctl and taken out of
    ``sys.modules`` again, so a child's modules are those of a fresh runner.  False when it
    cannot be done."""
    before = set(_sys_modules)
    try:
        import ctypes  # only a session needs it, and only once

        prctl = ctypes.CDLL(None, use_errno=True).prctl
        sealed = prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False
    finally:
        for name in set(_sys_modules) - before:
            del _sys_modules[name]
    if sealed:
        _DUMPABLE[:] = [prctl]
    return sealed


def _empty(folder: str) -> None:
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                _empty(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except OSError:
            continue


def main() -> None:
    setup: wire.Setup = _json_loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    _prepare(setup if _type(setup) is dict else {})  # before any job or candidate exists
    stdin = sys.stdin.buffer
    job = _json_loads(stdin.readline())  # a warm jail parses it before its candidate exists
    if _type(job.get("session")) is dict:
        run_session(job["session"])
    nonce = stdin.read().strip()  # the rest, up to the end the host makes once it may start
    if nonce:
        job["nonce"] = nonce.decode("ascii", "replace")
    run(job)


if __name__ == "__main__":
    main()
