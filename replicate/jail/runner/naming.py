"""Names that verify: the importable name of a class, function or module object, checked by
looking it up again (never by trusting its own ``__module__`` or ``__qualname__``)."""

from __future__ import annotations

import builtins
import sys
import types
from typing import TYPE_CHECKING, Any

from .base import (
    _BUILTINS,
    _MISSING,
    _SNAPSHOT,
    _UNVERIFIED,
    _builtin_eq,
    _builtin_name,
    _builtin_self,
    _descriptor_get,
    _dict_get,
    _dict_items,
    _dict_update,
    _FunctionType,
    _id,
    _instance_dict,
    _is_in,
    _issubclass,
    _member_get,
    _member_set,
    _module_dict,
    _ModuleType,
    _object_new,
    _proxy_get,
    _proxy_items,
    _sorted,
    _sys_modules,
    _table,
    _Timeout,
    _type,
    _type_dict,
    _type_module,
    _type_mro,
    _type_qualname,
    _WrapperDescriptor,
)

if TYPE_CHECKING:
    from .base import Tagged
    from .encoding import _Encoder

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


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


_BY_STATE = "<by state>"
# What follows `<unverified>` in the name of a class whose own `__eq__` its fields do not decide
_EQ_NOT_BY_FIELDS = "<__eq__ not by its fields>"


def state_type_name(
    x: object, cls: type, name: str, members: list[tuple[str, Any, type]], dict_desc: Any
) -> str:
    """The name an instance's class goes by in its outcome (`name`, its `type_name`), where the
    instance `x` is encoded by its state (`members`, its slots, and `dict_desc`, its `__dict__`
    descriptor): a class whose name does not verify (one a function makes, `make.<locals>.Tally`)
    is named `<by state>` and the name it claims, so that its instances compare by class name and
    state (a class of its own a candidate names alike compares alike), when its state decides its
    equality: it defines no value equality (no `__eq__` in its MRO but object's), or its own
    `__eq__` says `x` equals a copy rebuilt from its fields, both ways (`_equals_rebuilt`). One
    whose `__eq__` says otherwise is `<unverified><__eq__ not by its fields>` and that name,
    which matches nothing; any other unverified name is kept."""
    claimed = name[len(_UNVERIFIED) :]
    if not name.startswith(_UNVERIFIED) or claimed == "?":
        return name
    for klass in _type_mro(cls):
        own = _proxy_get(_type_dict(klass), "__eq__", _MISSING)
        if own is not _MISSING:
            if klass is object or _equals_rebuilt(x, cls, own, members, dict_desc):
                break
            return _UNVERIFIED + _EQ_NOT_BY_FIELDS + claimed
    return _BY_STATE + claimed


def _equals_rebuilt(
    x: object, cls: type, eq: Any, members: list[tuple[str, Any, type]], dict_desc: Any
) -> bool:
    """Whether `eq`, `cls`'s own `__eq__`, says `x` and a copy of it rebuilt from its fields
    (`object.__new__`, its set slots and its `__dict__`, the same objects) are equal, both ways:
    its equality is then its state's, as the outcome records it. Anything else (a result not
    `True`, an error, an `__eq__` no plain function or slot wrapper) is not. The class's code
    runs here, inside the call's time window: the reference's, at gen, decides what a task
    records; a candidate's can only name its own objects (its own `__eq__` decides nothing the
    grader compares but that name)."""
    if _type(eq) is not _FunctionType and _type(eq) is not _WrapperDescriptor:
        return False
    try:
        copy: object = _object_new(cls)
        for _name, desc, klass in members:
            try:
                _member_set(desc, copy, _member_get(desc, x, klass))
            except AttributeError:  # an unset slot stays unset
                continue
        fields = _instance_dict(x, dict_desc)
        into = _instance_dict(copy, dict_desc)
        if fields is not None and into is not None:
            _dict_update(into, fields)
        return eq(x, copy) is True and eq(copy, x) is True
    except BaseException as exc:
        if _type(exc) is _Timeout:
            raise
        return False


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


# a class's static and class methods: its dict holds the wrapper, whose `__func__` is the function
_METHOD_WRAPPERS = _table({staticmethod: None, classmethod: None})


# The standard library's top-level names (3.10+), whose modules bind no library's sentinel, and
# the runner's own package: left out of the index below.
_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ()))
_OWN = (__package__ or __name__).split(".")[0]
_SENTINELS: list[Any] = [-1, {}]  # the number of modules indexed, {id: (object, name)}


def _sentinel_alias(obj: object) -> str | None:
    """A bare `object()` (a sentinel, `_absent = object()`) by the first name, by module name
    then attribute name, that a loaded module outside the standard library binds it to; None
    when none does.  Identity is the whole claim, as for `_alias`: another bare object has no
    such name, so a candidate that makes its own sentinel where the original kept the module's
    is told apart.  The index is built again when modules were imported since."""
    if _SENTINELS[0] != len(_sys_modules):
        _index_sentinels()
    known = _dict_get(_SENTINELS[1], _id(obj))
    if known is None or known[0] is not obj:
        return None
    return known[1] if _verified(obj, *known[1].rsplit(".", 1)) == known[1] else None


def _index_sentinels() -> None:
    found: dict[int, tuple[object, str]] = {}
    for module in _sorted(name for name in list(_sys_modules) if _type(name) is str):
        if module.split(".")[0] in _STDLIB or module.startswith(("_", _OWN)):
            continue
        mod = _dict_get(_sys_modules, module)
        if _type(mod) is not _ModuleType:
            continue
        for name, value in _sorted(
            (n, v) for n, v in _dict_items(_module_dict(mod)) if _type(n) is str
        ):
            if _type(value) is object and _id(value) not in found:
                found[_id(value)] = (value, module + "." + name)
    _SENTINELS[0], _SENTINELS[1] = len(_sys_modules), found
