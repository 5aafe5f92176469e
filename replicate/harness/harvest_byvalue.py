"""Arguments pickled by value, for the harvest plugin: what the standard `pickle` refuses.

A lambda or a function or class defined inside a test, passed to a target, has no name the jail
could import, so `pickle` refuses it. cloudpickle records such objects by value (code, closure
values, the globals they read), and everything defined in the repository's test modules too,
which the jail does not import either. The plugin asks here only after `pickle` failed, so
every call recorded before keeps its bytes.

Standard library only, shipped beside the plugin: cloudpickle itself is one module file the host
mounts read-only and names in the configuration (`replicate.harness.byvalue`); it is loaded
under `MODULE`, the name its pickles then carry and the runner loads it by.
"""

from __future__ import annotations

import importlib.util
import os
import sys
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
        self._modules_seen = 0

    def dumps(self, obj: Any, protocol: int) -> bytes | None:
        """`obj` pickled by value where it must be, or None (no cloudpickle, or it fails too)."""
        module = self._load()
        if module is None:
            return None
        self._register_tests(module)
        try:
            return bytes(module.dumps(obj, protocol=protocol))
        except Exception:  # noqa: BLE001 - a lock, a generator, a C object: not ours to carry
            return None

    def _load(self) -> Any:
        if self._module is None and not self._failed:
            try:
                spec = importlib.util.spec_from_file_location(MODULE, str(self._path))
                if spec is None or spec.loader is None:
                    raise ImportError(MODULE)
                module = importlib.util.module_from_spec(spec)
                sys.modules[MODULE] = module  # its pickles name their helpers by this module
                spec.loader.exec_module(module)
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
