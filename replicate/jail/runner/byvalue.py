"""Callables carried by value: cloudpickle's module file (shipped beside the runner by the host)
loaded for a job whose inputs need it, and the functions it rebuilt named so they encode."""

from __future__ import annotations

import builtins
import importlib
import importlib.machinery
import types
from collections.abc import Callable
from typing import Any

from .base import (
    _dict_get,
    _dict_pop,
    _function_module,
    _function_qualname,
    _id,
    _issubclass,
    _sys_modules,
    _type,
    _type_module,
    _type_qualname,
    wire,
)
from .naming import _ALIASES

globals()["__builtins__"] = dict(builtins.__dict__)  # see base

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
    """Load the by-value module the inputs' pickles name (replicate.jail.by_value_module), before
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
