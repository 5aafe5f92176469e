"""Arguments pickled by value, for the harvest plugin: what the standard `pickle` refuses.

A lambda or a function or class defined inside a test, passed to a target, has no name the jail
could import, so `pickle` refuses it. cloudpickle records such objects by value (code, closure
values, the globals they read), and everything defined in the repository's test modules too,
which the jail does not import either. The plugin asks here only after `pickle` failed, so
every call recorded before keeps its bytes.

Standard library only, shipped beside the plugin: cloudpickle itself is one module file the host
mounts read-only and names in the configuration (`replicate.jail.byvalue`); it is loaded
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

    def dumps(self, obj: Any, protocol: int) -> bytes | None:
        """`obj` pickled by value where it must be, or None (no cloudpickle, or it fails too)."""
        module = self._load()
        if module is None:
            return None
        self._register_tests(module)
        out = io.BytesIO()
        try:
            self._pickler(out, protocol=protocol).dump(obj)
        except Exception:  # noqa: BLE001 - a lock, a generator, a C object: not ours to carry
            return None
        return out.getvalue()

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
            except Exception:  # noqa: BLE001 - without it, calls that need it are dropped
                sys.modules.pop(MODULE, None)
                self._failed = True
        return self._module

    def _register_tests(self, module: Any) -> None:
        """Mark the test modules imported so far to be pickled by value (rescanned only when
        more modules were imported since)."""
        if len(sys.modules) == self._modules_seen:
            return
        self._modules_seen = len(sys.modules)
        for mod in list(sys.modules.values()):
            filename = getattr(mod, "__file__", None)
            if isinstance(filename, str) and self._is_test_file(os.path.abspath(filename)):
                try:
                    module.register_pickle_by_value(mod)
                except (ValueError, TypeError):
                    continue  # not registrable (a module object not in sys.modules under name)


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
