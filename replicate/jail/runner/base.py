"""What every part of the runner shares, taken before any candidate code runs: a private copy of
the builtins, the library functions the runner calls (captured here, so a candidate that patches
``builtins``, ``json``, ``types`` or ``sys.modules`` changes nothing they do), the wire format's
names (loaded from ``wire.py`` beside the package, not imported), the encoding limits and the
per-call alarm."""

from __future__ import annotations

import _signal as _signal_c
import _thread
import binascii
import builtins
import collections
import decimal
import functools
import importlib
import importlib.machinery
import io
import json
import json.encoder
import marshal
import os
import pathlib
import pickle
import random
import signal
import site
import sys
import time
import types
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

globals()["__builtins__"] = dict(builtins.__dict__)  # functions below resolve builtins here


def wire_beside(part_file: str) -> str:
    """The wire module's file as shipped beside the runner's package that holds `part_file`:
    compiled beside a compiled runner (``replicate.jail.bytecode``), source beside the source."""
    name = "wire.pyc" if part_file.endswith(".pyc") else "wire.py"
    return os.path.join(os.path.dirname(os.path.dirname(part_file)), name)


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
_isinstance = isinstance
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
_WrapperDescriptor = types.WrapperDescriptorType
_partial_func = functools.partial.__dict__["func"].__get__
_partial_args = functools.partial.__dict__["args"].__get__
_type_basicsize = type.__dict__["__basicsize__"].__get__
_type_itemsize = type.__dict__["__itemsize__"].__get__
_type_dictoffset = type.__dict__["__dictoffset__"].__get__
_type_weakrefoffset = type.__dict__["__weakrefoffset__"].__get__
_type_flags = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time, whose methods can change
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
_member_set = types.MemberDescriptorType.__set__
_object_new = object.__new__
_dict_update = dict.update
_member_objclass = types.MemberDescriptorType.__dict__["__objclass__"].__get__
_exc_args = BaseException.__dict__["args"].__get__
_exc_str = BaseException.__str__
_json_str = json.encoder.encode_basestring_ascii
_json_loads = json.loads
_b2a_base64 = binascii.b2a_base64
_a2b_base64 = binascii.a2b_base64
_crc32 = zlib.crc32
_fast_pickle_loads = pickle.loads
_BytesIO = io.BytesIO
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
_SEQUENCE = wire.SEQUENCE_TAG
_CALL_HEAD = wire.CALL_HEAD
_RESULT = wire.RESULT
_RETURNED, _RAISED, _TIMEOUT = wire.RETURNED, wire.RAISED, wire.TIMEOUT
_LOAD_ERROR, _RUNNER_ERROR = wire.LOAD_ERROR, wire.RUNNER_ERROR
_STARTED, _READY, _IMPORT_ERROR = wire.STARTED, wire.READY, wire.IMPORT_ERROR
_LOADED, _DONE, _EXITED = wire.LOADED, wire.DONE, wire.EXITED
_READ, _SAME = wire.READ, wire.SAME
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


def _instance_dict(x: Any, desc: Any) -> dict[Any, Any] | None:
    """The instance dict through the type's native `__dict__` descriptor, never a property."""
    if _type(desc) is _GetSet:
        value = _getset_get(desc, x)
    elif _type(desc) is _Member:
        value = _member_get(desc, x)
    else:
        return None
    return value if _type(value) is dict else None


def _is_in(obj: object, table: dict[int, Any]) -> bool:
    """Membership by identity: never calls a candidate's `__eq__` or `__hash__`."""
    return _id(obj) in table and table[_id(obj)][0] is obj


class EncodeLimits:
    """Bounds on one encoded value: iterator items, nesting depth, approximate JSON size; and
    the iterator items of a call's arguments (`arg_items`, `max_items` where not given), and
    whether a call's outcome says how far it read each iterator argument (`reads`)."""

    __slots__ = ("arg_items", "max_bytes", "max_depth", "max_items", "reads")

    def __init__(
        self,
        max_items: int = 10_000,
        max_depth: int = 64,
        max_bytes: int = 2_000_000,
        arg_items: int | None = None,
        reads: bool = False,
    ) -> None:
        self.max_items = max_items
        self.max_depth = max_depth
        self.max_bytes = max_bytes
        self.arg_items = max_items if arg_items is None else arg_items
        self.reads = reads

    def arguments(self) -> EncodeLimits:
        """The bounds for a call's arguments: what is left of an iterator argument shows how far
        the call read it in its first items, so fewer are kept than of a returned iterator."""
        return EncodeLimits(self.arg_items, self.max_depth, self.max_bytes)


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


def _table(pairs: dict[type, Any]) -> dict[int, tuple[type, Any]]:
    return {_id(t): (t, fn) for t, fn in pairs.items()}


_PyUnpickler: Any = pickle._Unpickler  # the Python one


class _StorageUnpickler(_PyUnpickler):
    """Puts a dict or list subclass's pickled items straight into its storage, as they were,
    not through the subclass's `__setitem__` / `extend` / `append`: pickle sets the items before
    it sets the object's attributes, so an override that reads an attribute fails there (a dict
    that calls `self.callback` on every change). Its attributes follow as usual."""

    dispatch = dict(_PyUnpickler.dispatch)

    def load_setitems(self) -> None:
        items = self.pop_mark()
        target = self.stack[-1]
        for i in range(0, len(items), 2):
            self._set(target, items[i], items[i + 1])

    def load_setitem(self) -> None:
        value = self.stack.pop()
        key = self.stack.pop()
        self._set(self.stack[-1], key, value)

    @staticmethod
    def _set(target: Any, key: Any, value: Any) -> None:
        if _isinstance(target, dict):
            dict.__setitem__(target, key, value)
        else:
            target[key] = value

    def load_appends(self) -> None:
        items = self.pop_mark()
        target = self.stack[-1]
        if _isinstance(target, list):
            list.extend(target, items)
        elif hasattr(target, "extend"):
            target.extend(items)
        else:
            for item in items:
                target.append(item)

    def load_append(self) -> None:
        value = self.stack.pop()
        target = self.stack[-1]
        if _isinstance(target, list):
            list.append(target, value)
        else:
            target.append(value)

    dispatch[pickle.SETITEMS[0]] = load_setitems
    dispatch[pickle.SETITEM[0]] = load_setitem
    dispatch[pickle.APPENDS[0]] = load_appends
    dispatch[pickle.APPEND[0]] = load_append


def _pickle_loads(data: bytes) -> Any:
    """`pickle.loads`; an input whose dict or list subclass refuses its own items is loaded
    again with them restored into its storage (`_StorageUnpickler`)."""
    try:
        return _fast_pickle_loads(data)
    except Exception:  # noqa: BLE001 - whatever an override raised: load the other way
        return _StorageUnpickler(_BytesIO(data)).load()
