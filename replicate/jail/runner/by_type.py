"""Each exact type's encoding: scalars, compounds, and the bases whose contents a subclass
carries (read through the base's own methods)."""

from __future__ import annotations

import builtins
import collections
import datetime
import decimal
import functools
import pathlib
import re
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import (
    Tagged,
    _b2a_base64,
    _complex_imag,
    _complex_real,
    _decimal_str,
    _default_factory,
    _deque_iter,
    _deque_maxlen,
    _dict_items,
    _float_hex,
    _id,
    _int_repr,
    _json_str,
    _lock_locked,
    _LockType,
    _odict_items,
    _path_str,
    _rlock_repr,
    _RLockType,
    _set_int_digits,
    _table,
    _type,
)
from .naming import _module_name, type_name

if TYPE_CHECKING:
    from .encoding import _Encoder

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


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


_ScalarFn = Callable[["_Encoder", Any], Tagged]
_CompoundFn = Callable[["_Encoder", Any, int], Tagged]


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
