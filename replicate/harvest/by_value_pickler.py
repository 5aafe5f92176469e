"""Arguments pickled by value, for the harvest plugin: what the standard `pickle` refuses.

A lambda or a function or class defined inside a test, passed to a target, has no name the jail
could import, so `pickle` refuses it. cloudpickle records such objects by value (code, closure
values, the globals they read), and everything defined in the repository's test modules too. The
plugin asks here when `pickle` failed, or when its bytes name a test module (a module-level helper
of the tests, taken by name: loading it would import the test module, and pytest with it, in the
jail on every run, ~0.25 s each); every other call keeps the standard pickle's bytes.

Standard library only, shipped beside the plugin: cloudpickle itself is one module file the host
mounts read-only and names in the configuration (`replicate.jail.by_value_module`); it is loaded
under `MODULE`, the name its pickles then carry and the runner loads it by.

The same tests must give the same bytes on every gen (a batch re-mints byte-identical), and
cloudpickle's own output holds two things that differ from run to run: the paths of the files
the code came from (the harvest runs the tests in a fresh scratch copy of the tree) and a random
id per class pickled by value. Here, paths under the tests' working directory are written
relative to it (a code object's file name, and a function's `__file__` and `__path__`), and a
class's id is its order of first sight in this run of the tests.
"""

from __future__ import annotations

import copyreg
import importlib.util
import io
import itertools
import os
import sys
import types
from collections import ChainMap
from collections.abc import Callable
from typing import Any

MODULE = "replicate_cloudpickle"


class ByValue:
    """cloudpickle, loaded from `path` on first use; `is_test_file(filename)`: a module the
    repository's tests define (pickled by value as a whole)."""

    def __init__(self, path: str | None, is_test_file: Callable[[str], bool]) -> None:
        self._path = path
        self._is_test_file = is_test_file
        self._module: Any = None
        self._failed = path is None
        self._pickler: Any = None
        self._modules_seen = 0
        self._test_names: tuple[bytes, ...] = ()

    def dumps(self, obj: Any, protocol: int) -> bytes | None:
        """`obj` pickled by value where it must be, or None (no cloudpickle, or it fails too)."""
        module = self._load()
        if module is None:
            return None
        self._scan_tests()
        out = io.BytesIO()
        try:
            self._pickler(out, protocol=protocol).dump(obj)
        except Exception:  # noqa: BLE001 - a lock, a generator, a C object: not ours to carry
            return None
        return out.getvalue()

    def names_tests(self, data: bytes) -> bool:
        """Whether a standard pickle may name an object of a test module by reference (its
        module's name is in the bytes): loading it would import that module in the jail, and
        pytest with it, ~0.25 s of every run of the task. A string that merely holds the name
        matches too, and costs only a pickle by value."""
        if self._failed:
            return False
        self._scan_tests()
        return any(name in data for name in self._test_names)

    def _load(self) -> Any:
        if self._module is None and not self._failed:
            try:
                spec = importlib.util.spec_from_file_location(MODULE, str(self._path))
                if spec is None or spec.loader is None:
                    raise ImportError(MODULE)
                module = importlib.util.module_from_spec(spec)
                sys.modules[MODULE] = module  # its pickles name their helpers by this module
                spec.loader.exec_module(module)
                self._pickler = _reproducible(module, os.getcwd())
                self._module = module
                self._modules_seen = 0  # the test modules found so far are registered now
            except Exception:  # noqa: BLE001 - without it, calls that need it are dropped
                sys.modules.pop(MODULE, None)
                self._failed = True
        return self._module

    def _scan_tests(self) -> None:
        """Find the test modules imported so far and mark them to be pickled by value once
        cloudpickle is loaded (rescanned only when more modules were imported since)."""
        if len(sys.modules) == self._modules_seen:
            return
        self._modules_seen = len(sys.modules)
        names = []
        for name, mod in list(sys.modules.items()):
            filename = getattr(mod, "__file__", None)
            if isinstance(filename, str) and self._is_test_file(os.path.abspath(filename)):
                names.append(name.encode())
                try:
                    if self._module is not None:
                        self._module.register_pickle_by_value(mod)
                except (ValueError, TypeError):
                    continue  # not registrable (a module object not in sys.modules under name)
        self._test_names = tuple(names)


def _reproducible(module: Any, root: str) -> Any:
    """cloudpickle's Pickler, writing paths under `root` relative to it and numbering classes
    in order of first sight (see the module docstring)."""

    def relative(path: Any) -> Any:
        if isinstance(path, str) and os.path.isabs(path):
            rel = os.path.relpath(path, root)
            return path if rel.startswith("..") else rel
        return path

    base = module.Pickler
    code_reduce = base._dispatch_table[types.CodeType]

    def reduce_code(code: types.CodeType) -> Any:
        return code_reduce(code.replace(co_filename=relative(code.co_filename)))

    numbers = itertools.count()
    known: dict[int, tuple[type, str]] = {}

    def tracker_id(class_def: type) -> str:
        seen = known.get(id(class_def))
        if seen is None or seen[0] is not class_def:
            seen = known[id(class_def)] = (class_def, f"replicate-class-{next(numbers)}")
        return seen[1]

    module._get_or_create_tracker_id = tracker_id

    class Pickler(base):  # type: ignore[misc, valid-type]
        _dispatch_table = {**base._dispatch_table, types.CodeType: reduce_code}
        dispatch_table = ChainMap(_dispatch_table, copyreg.dispatch_table)

        def _function_getnewargs(self, func: Any) -> Any:
            made = super()._function_getnewargs(func)
            base_globals = made[1]  # this pickle's copy, not the function's own globals
            if "__file__" in base_globals:
                base_globals["__file__"] = relative(base_globals["__file__"])
            if isinstance(base_globals.get("__path__"), list):
                base_globals["__path__"] = [relative(p) for p in base_globals["__path__"]]
            return made

    return Pickler
