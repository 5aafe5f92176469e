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

A bound method passed as an argument (a key function `ranker.score`) pickles as
`getattr(self, attribute)`, and its `self`, when it does not pickle by value, by reference: an
object the library's module holds (found by identity among its class's module's names) as that
name looked up again on loading (the module imported, standard library only); the running
unittest `TestCase` (`key=self.vowels`) as that test case with its state, less the running
test's outcome (which holds pytest's session).  A method target's own `self` held by its
module (a default instance built at import) is referenced by name alike.  Any other `self` is
pickled by value as ever.

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
import operator
import os
import sys
import types
from collections import ChainMap
from collections.abc import Callable
from typing import Any

try:
    from .budget import pickles
    from .rebuild import method_attribute
except ImportError:
    from replicate_harvest_budget import pickles  # type: ignore[no-redef]
    from replicate_harvest_rebuild import method_attribute  # type: ignore[no-redef]

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

    def dumps(self, obj: Any, protocol: int, target_self: Any = None) -> bytes | None:
        """`obj` pickled by value where it must be, or None (no cloudpickle, or it fails too);
        `target_self`: the `self` of a method target's call in it, by reference if it does not
        pickle by value and its library's module holds it."""
        module = self._load()
        if module is None:
            return None
        self._scan_tests()
        out = io.BytesIO()
        selves = {} if target_self is None else {id(target_self): False}
        try:
            self._pickler(out, protocol=protocol, selves=selves).dump(obj)
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
                self._pickler = _reproducible(module, os.getcwd(), self._is_test_file)
                module.register_pickle_by_value(sys.modules[Benchmark.__module__])
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


class Benchmark:
    """What a recorded call passes where the tests passed pytest-benchmark's `benchmark`
    fixture (which holds its logger, its session and its timer: it does not pickle): the
    fixture as `--benchmark-disable` runs it, the benchmarked function called once with the
    arguments the call hands it (`benchmark(fn, *args)`, `benchmark.pedantic(fn, args, kwargs,
    setup=...)`), returning what it returns. Pickled by value (the jail has no plugin)."""

    def __init__(self, name: str, group: str | None) -> None:
        self.name, self.group = name, group
        self.extra_info: dict[str, Any] = {}

    def __call__(self, function_to_benchmark: Any, *args: Any, **kwargs: Any) -> Any:
        return function_to_benchmark(*args, **kwargs)

    def pedantic(self, target: Any, args: Any = (), kwargs: Any = None, **how: Any) -> Any:
        setup, teardown = how.get("setup"), how.get("teardown")
        if setup is not None:
            made = setup()
            args, kwargs = made if made is not None else (args, kwargs)
        try:
            return target(*args, **(kwargs or {}))
        finally:
            if teardown is not None:
                teardown(*args, **(kwargs or {}))


def _benchmark_reduce(fixture: Any) -> Any:
    """pytest-benchmark's fixture as a `Benchmark`, or NotImplemented for anything else."""
    kind = type(fixture)
    if kind.__name__ != "BenchmarkFixture" or not kind.__module__.startswith("pytest_benchmark"):
        return NotImplemented
    name, group = getattr(fixture, "name", ""), getattr(fixture, "group", None)
    return Benchmark, (str(name), group if group is None else str(group))


class _Imported:
    """Pickles as the module `name` imported (what the by-name reference looks up in)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __reduce__(self) -> Any:
        return importlib.import_module, (self.name,)


def _module_level(owner: Any, is_test_file: Callable[[str], bool]) -> tuple[str, str] | None:
    """The module and name under which its class's module holds `owner` (by identity), if
    any; never a test module (loading it would import pytest in the jail) nor `__main__`."""
    name = type(owner).__module__
    module = sys.modules.get(name) if isinstance(name, str) else None
    filename = getattr(module, "__file__", None)
    if module is None or name == "__main__" or not isinstance(filename, str):
        return None
    if is_test_file(os.path.abspath(filename)):
        return None
    for attribute, value in list(vars(module).items()):
        if value is owner and attribute.isidentifier():
            return name, attribute
    return None


def _method_reduce(method: Any, selves: dict[int, bool]) -> Any:
    """A bound method as `getattr(self, attribute)`, its `self` marked as one (see the module
    docstring), or NotImplemented."""
    owner = method.__self__
    if isinstance(owner, type | types.ModuleType):
        return NotImplemented  # a class's or a module's own: by name, as ever
    attribute = method_attribute(owner, method)
    if attribute is None:
        return NotImplemented
    selves[id(owner)] = True  # the pickler's memo keeps it alive until the dump ends
    return getattr, (owner, attribute)


def _self_reduce(owner: Any, test_case: bool, is_test_file: Callable[[str], bool]) -> Any:
    """A `self` that does not pickle by value by reference: the name its library's module
    holds it by, or (`test_case`) the running test case less its outcome; else NotImplemented
    (by value, as ever)."""
    if pickles(owner):
        return NotImplemented
    held = _module_level(owner, is_test_file)
    if held is not None:
        return operator.attrgetter(held[1]), (_Imported(held[0]),)
    if not test_case or not _is_test_case(owner):
        return NotImplemented
    reduced = owner.__reduce_ex__(4)
    state = reduced[2] if len(reduced) > 2 else None
    if type(state) is not dict or "_outcome" not in state:
        return NotImplemented
    return (*reduced[:2], {**state, "_outcome": None}, *reduced[3:])


def _reproducible(module: Any, root: str, is_test_file: Callable[[str], bool]) -> Any:
    """cloudpickle's Pickler, writing paths under `root` relative to it and numbering classes
    in order of first sight (see the module docstring), with bound methods by reference."""

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

        def __init__(self, *args: Any, selves: dict[int, bool], **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            # the `self` of each bound method pickled, or of the target's call: by id, whether
            # it may be the running test case
            self._selves = selves

        def reducer_override(self, obj: Any) -> Any:
            kind = type(obj)
            found = NotImplemented
            if kind is types.MethodType or kind is types.BuiltinMethodType:
                found = _method_reduce(obj, self._selves)
            elif id(obj) in self._selves:
                found = _self_reduce(obj, self._selves[id(obj)], is_test_file)
            elif kind.__name__ == "BenchmarkFixture":
                found = _benchmark_reduce(obj)
            return super().reducer_override(obj) if found is NotImplemented else found

        def _function_getnewargs(self, func: Any) -> Any:
            made = super()._function_getnewargs(func)
            base_globals = made[1]  # this pickle's copy, not the function's own globals
            if "__file__" in base_globals:
                base_globals["__file__"] = relative(base_globals["__file__"])
            if isinstance(base_globals.get("__path__"), list):
                base_globals["__path__"] = [relative(p) for p in base_globals["__path__"]]
            return made

    return Pickler


def _is_test_case(obj: Any) -> bool:
    unittest = sys.modules.get("unittest")
    return unittest is not None and isinstance(obj, unittest.TestCase)
