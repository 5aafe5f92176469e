"""The recording pytest plugin, run for real in a subprocess on a tiny temp project."""

from __future__ import annotations

import ast
import base64
import io
import json
import os
import pickle
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.harvest import collect as harvest_collect
from replicate.harvest import rebuild as harvest_rebuild
from replicate.harvest.by_value_pickler import ByValue
from replicate.harvest.collect import PLUGIN_FILES, _parse, install_plugin
from replicate.harvest.test_code import is_test_file
from replicate.jail import by_value_module
from tests.integration.minted import write_files

CORE = '''
import functools
import os


@functools.lru_cache(maxsize=None)
def square(x):
    """The square of x, cached.

    >>> square(7)
    49
    """
    return x * x


def double(x):
    """Twice x.

    >>> double(21)
    42
    """
    return x * 2


def apply(fn, x):
    return fn(x)


def outer(x):
    return inner(x) + 1


def inner(x):
    return x * 10


def size(x):
    return len(x)


class Marker:
    """Pickling it leaves a trace on disk."""

    def __reduce__(self):
        open(os.environ["MARKER"], "w").close()
        return (Marker, ())


class Box:
    def __init__(self, n):
        self.n = n

    def grow(self, k):
        self.n += k
        return self.n

    @classmethod
    def make(cls, n):
        return cls(n)

    @staticmethod
    def half(x):
        return x / 2
'''

TESTS = """
import pkg.core as core
from pkg import double
from pkg.core import Box, Marker

SHIFT = lambda v: v + 1  # noqa: E731
TRIPLE = lambda v: v * 3  # noqa: E731


def test_double():
    assert double(1) == 2
    assert double(1) == 2
    assert double(2) == 4


def test_outer():
    assert core.outer(4) == 41  # calls inner(4) itself
    assert core.inner(5) == 50
    assert core.inner(4) == 40  # the call the library made, now made by the test


def test_apply():
    assert core.apply(lambda v: v, 1) == 1
    assert core.apply(SHIFT, 1) == 2
    assert core.apply(TRIPLE, 1) == 3
    assert core.apply(abs, -3) == 3


def test_box():
    box = Box(1)
    assert box.grow(2) == 3
    assert Box.make(5).n == 5
    assert Box.half(4) == 2
    assert box.half(6) == 3


def test_square():
    assert core.square(3) == 9
    core.square.cache_clear()
    assert core.square.cache_info().hits == 0


def test_huge():
    assert core.size(list(range(20_000)) + [Marker()]) == 20_001
    assert core.size({"k": "v" * 100_000}) == 1


def test_many():
    for n in range(40):
        assert core.size([n]) == 1
"""

KEYS = {
    "pkg.core.double": ("pkg.core", "double", "function"),
    "pkg.core.square": ("pkg.core", "square", "function"),
    "pkg.core.apply": ("pkg.core", "apply", "function"),
    "pkg.core.inner": ("pkg.core", "inner", "function"),
    "pkg.core.outer": ("pkg.core", "outer", "function"),
    "pkg.core.size": ("pkg.core", "size", "function"),
    "pkg.core.Box.grow": ("pkg.core", "Box.grow", "method"),
    "pkg.core.Box.make": ("pkg.core", "Box.make", "classmethod"),
    "pkg.core.Box.half": ("pkg.core", "Box.half", "staticmethod"),
    "nosuch.mod.f": ("nosuch.mod", "f", "function"),
    "pkg.core.missing": ("pkg.core", "missing", "function"),
    "pkg.core.Nope.meth": ("pkg.core", "Nope.meth", "method"),
}


class _Unpickler(pickle.Unpickler):
    """Loads the temp project's classes as empty stand-ins (the project is not importable here)."""

    def find_class(self, module: str, name: str) -> Any:
        if module.split(".")[0] == "pkg":
            return type(name, (), {})
        return super().find_class(module, name)


@dataclass(frozen=True)
class Harvest:
    records: list[dict[str, Any]]
    marker: Path
    exit_code: int
    log: str

    def calls(self, key: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [
            _Unpickler(io.BytesIO(base64.b64decode(r["pickle_b64"]))).load()
            for r in self.records
            if r["rec"] == "call" and r["key"] == key
        ]

    def visible(self, key: str) -> list[bool]:
        return [r["visible"] for r in self.records if r["rec"] == "call" and r["key"] == key]

    def origins(self, key: str) -> list[str]:
        return [r["origin"] for r in self.records if r["rec"] == "call" and r["key"] == key]

    def drops(self, key: str) -> Counter[str]:
        return Counter(
            {
                r["reason"]: r["count"]
                for r in self.records
                if r["rec"] == "drop" and r["key"] == key
            }
        )

    def wraps(self) -> dict[str, dict[str, Any]]:
        return {r["key"]: r for r in self.records if r["rec"] == "wrap"}


def _run_plugin(
    root: Path,
    files: dict[str, str],
    keys: dict[str, tuple[str, str, str]],
    settings: dict[str, Any] | None = None,
    **env: str,
) -> Harvest:
    """Run pytest with the plugin on a project of `files` under `root`, recording `keys`
    (`settings`: more of the plugin's configuration)."""
    project = write_files(root / "project", files)
    plugin = root / "plugin"
    install_plugin(plugin)
    out = root / "harvest.jsonl"
    config = {
        "targets": [
            {"key": key, "module": m, "qualname": q, "kind": k} for key, (m, q, k) in keys.items()
        ],
        "out": str(out),
        "max_per_target": 5,
        **(settings or {}),
    }
    (root / "harvest.json").write_text(json.dumps(config))
    marker = root / "pickled-the-marker"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PYTHONPATH": f"{plugin}:{project}",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "REPLICATE_HARVEST": str(root / "harvest.json"),
        "MARKER": str(marker),
        **env,
    }
    argv = [sys.executable, "-m", "pytest", "-p", "replicate_harvest", "-p", "no:cacheprovider"]
    argv += ["-q", "--doctest-modules", "tests", "pkg"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return Harvest(records, marker, done.returncode, done.stdout + done.stderr)


def edit_plugin(monkeypatch: pytest.MonkeyPatch, file_name: str, old: str, new: str) -> None:
    """`_run_plugin` from now on installs the plugin with `old` replaced by `new` in its file
    `file_name` (a defence taken out, for a control)."""

    def edited(folder: Path) -> None:
        harvest_collect.install_plugin(folder)
        path = folder / file_name
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))

    monkeypatch.setattr(sys.modules[__name__], "install_plugin", edited)


@pytest.fixture(scope="module")
def harvest(tmp_path_factory: pytest.TempPathFactory) -> Harvest:
    files = {
        "pkg/__init__.py": "from pkg.core import double\n",
        "pkg/core.py": CORE,
        "tests/test_core.py": TESTS,
    }
    return _run_plugin(tmp_path_factory.mktemp("harvest"), files, KEYS)


def test_the_tests_themselves_pass(harvest: Harvest) -> None:
    assert harvest.exit_code == 0, harvest.log[-2000:]
    assert "9 passed" in harvest.log  # 7 tests and 2 doctests


def test_wrap_records(harvest: Harvest) -> None:
    wraps = harvest.wraps()
    assert set(wraps) == set(KEYS)
    ok = {k for k, r in wraps.items() if r["ok"]}
    assert ok == {
        k for k in KEYS if k.startswith("pkg.core.") and "issing" not in k and "Nope" not in k
    }
    assert wraps["nosuch.mod.f"]["reason"].startswith("module does not import: ModuleNotFoundError")
    assert wraps["pkg.core.missing"]["reason"] == "not defined at import"
    assert wraps["pkg.core.Nope.meth"]["reason"] == "enclosing class not found"


def test_calls_through_a_reexport_and_from_doctests_once_each(harvest: Harvest) -> None:
    assert harvest.calls("pkg.core.double") == [((1,), {}), ((2,), {}), ((21,), {})]
    origins = harvest.origins("pkg.core.double")
    assert origins[:2] == ["tests/test_core.py::test_double"] * 2
    assert origins[2] == "pkg/core.py::pkg.core.double"


def test_calls_from_tests_and_doctests_are_visible_those_from_the_library_are_not(
    harvest: Harvest, tmp_path: Path
) -> None:
    assert harvest.visible("pkg.core.double") == [True, True, True]  # tests, then the doctest
    assert harvest.visible("pkg.core.outer") == [True]
    # inner(4) made by outer (library code), inner(5) by the test; then the test makes inner(4)
    # itself: the call is written again, visible, and the trusted side merges the two.
    assert harvest.calls("pkg.core.inner") == [((4,), {}), ((5,), {}), ((4,), {})]
    assert harvest.visible("pkg.core.inner") == [False, True, True]
    out = tmp_path / "harvest.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in harvest.records))
    merged = _parse(out, tmp_path)
    assert [c.visible for c in merged.calls["pkg.core.inner"]] == [True, True]
    assert len(merged.calls["pkg.core.outer"]) == 1


def test_which_frames_count_as_test_code() -> None:
    root = "/work/repo"
    test_code = ["tests/test_x.py", "pkg/tests/helpers.py", "x_test.py", "conftest.py"]
    test_code += ["tests.py", "pkg/test.py", "pkg/sub/tests.py"]  # unittest's discovery names
    assert all(is_test_file(f"{root}/{rel}", root) for rel in test_code)
    assert is_test_file("<doctest pkg.core.double[0]>", root)
    library = ["pkg/core.py", "pkg/testing.py", "src/pkg/lexer.py"]
    assert not any(is_test_file(f"{root}/{rel}", root) for rel in library)
    assert not is_test_file("/usr/lib/python3.11/tests/x.py", root)  # outside
    assert not is_test_file("<string>", root)


def test_cached_function_is_recorded_from_tests_and_its_doctest(harvest: Harvest) -> None:
    assert harvest.calls("pkg.core.square") == [((3,), {}), ((7,), {})]
    assert harvest.origins("pkg.core.square") == [
        "tests/test_core.py::test_square",
        "pkg/core.py::pkg.core.square",
    ]


def test_methods_record_self_classmethods_drop_cls(harvest: Harvest) -> None:
    grow = harvest.calls("pkg.core.Box.grow")
    assert len(grow) == 1
    (me, k), kwargs = grow[0]
    assert type(me).__name__ == "Box" and me.n == 1 and k == 2 and kwargs == {}  # state before
    assert harvest.calls("pkg.core.Box.make") == [((5,), {})]
    assert harvest.calls("pkg.core.Box.half") == [((4,), {}), ((6,), {})]


def test_method_calls_carry_the_class_call_that_built_self(harvest: Harvest) -> None:
    (grow,) = _call_records(harvest, "pkg.core.Box.grow")
    assert pickle.loads(base64.b64decode(grow["ctor_b64"])) == ((1,), {})
    for key in ("pkg.core.Box.make", "pkg.core.Box.half", "pkg.core.double"):
        assert all("ctor_b64" not in r for r in _call_records(harvest, key)), key


def test_lambdas_are_dropped_with_one_reason_per_cause(harvest: Harvest) -> None:
    assert harvest.calls("pkg.core.apply") == [((abs, -3), {})]
    drops = harvest.drops("pkg.core.apply")
    assert sum(drops.values()) == 3
    # named by what does not pickle: the two module-level lambdas, one reason; the local one
    assert drops == Counter(
        {"argument does not pickle: lambda": 2, "argument does not pickle: local lambda": 1}
    )
    details = {
        r["reason"]: r["detail"]
        for r in harvest.records
        if r["rec"] == "drop" and r["key"] == "pkg.core.apply"
    }
    assert all(d and "0x" not in d for d in details.values()), details
    assert "local object" in details["argument does not pickle: local lambda"]


def test_max_per_target(harvest: Harvest) -> None:
    calls = harvest.calls("pkg.core.size")
    assert len(calls) == 5
    assert calls == [(([n],), {}) for n in range(5)]


def test_huge_arguments_are_dropped_before_pickling(harvest: Harvest) -> None:
    assert harvest.drops("pkg.core.size") == Counter({"argument too large": 2})
    assert not harvest.marker.exists()


def test_paths_record_is_last(harvest: Harvest) -> None:
    assert harvest.records[-1]["rec"] == "paths"
    assert isinstance(harvest.records[-1]["sys_path"], list)


def test_plugin_is_inert_without_configuration(tmp_path: Path) -> None:
    write_files(tmp_path, {"test_x.py": "def test_x():\n    assert True\n"})
    plugin = tmp_path / "plugin"
    install_plugin(plugin)
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(plugin),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "replicate_harvest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "1 passed" in done.stdout


def test_large_argument_guard() -> None:
    class Holder:
        def __init__(self, data: object) -> None:
            self.data = data

    looks_large = harvest_rebuild.looks_large
    assert looks_large((list(range(5001)),), {})
    assert looks_large((), {"k": "x" * 5001})
    assert looks_large((Holder(bytes(6000)),), {})
    assert not looks_large((list(range(5000)), Holder([1, 2])), {"k": "short"})


# ---------------------------------------------------------------- rebuilding `self`

STORE = '''
import threading


class Store:
    """Its lock, made by __init__, does not pickle; the class call's arguments do."""

    def __init__(self, size, values=None, *, tag="t"):
        self._lock = threading.RLock()
        self.size = size
        self.data = dict(values or {})
        self.tag = tag

    def put(self, k, v):
        with self._lock:
            self.data[k] = v
            return len(self.data)


class Plain(Store):
    pass


class Doubled(Store):
    def __init__(self, n):
        super().__init__(n * 2)


class Base:
    def __init__(self, start):
        self._lock = threading.Lock()
        self.n = start


class Tally(Base):
    def bump(self):
        self.n += 1
        return self.n


EARLY = Store(1)
'''

STORE_TESTS = """
from pkg.store import EARLY, Doubled, Plain, Store, Tally


def test_store():
    values = {"a": 1}
    store = Store(3, values, tag="x")
    values["b"] = 2  # after the class call: the rebuild gets {"a": 1}
    store.put("z", 0)
    assert store.put("k", 1) == 3
    assert Plain(4).put("p", 1) == 1
    assert EARLY.put("e", 1) == 1
    assert Doubled(2).put("d", 1) == 1
    assert Tally(5).bump() == 6
"""

STORE_KEYS = {
    "pkg.store.Store.put": ("pkg.store", "Store.put", "method"),
    "pkg.store.Tally.bump": ("pkg.store", "Tally.bump", "method"),
}
RLOCK_DROP = "argument does not pickle: Store holding a RLock"
RLOCK_DROP_DOUBLED = "argument does not pickle: Doubled holding a RLock"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Harvest, Path]:
    root = tmp_path_factory.mktemp("rebuild")
    files = {"pkg/__init__.py": "", "pkg/store.py": STORE, "tests/test_store.py": STORE_TESTS}
    return _run_plugin(root, files, STORE_KEYS), root / "project"


def _load_fresh(project: Path, pickle_b64: str, show: str) -> str:
    """Unpickle a recorded call in a fresh interpreter that has no plugin; print `show`."""
    code = (
        "import base64, pickle, sys\n"
        "(args, kwargs) = pickle.loads(base64.b64decode(sys.argv[1]))\n"
        "me = args[0]\n"
        f"print(repr({show}))\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(project)}
    done = subprocess.run(
        [sys.executable, "-c", code, pickle_b64],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def _call_records(h: Harvest, key: str) -> list[dict[str, Any]]:
    return [r for r in h.records if r["rec"] == "call" and r["key"] == key]


def test_a_self_that_does_not_pickle_is_rebuilt_from_its_class_call(
    rebuilt: tuple[Harvest, Path],
) -> None:
    h, project = rebuilt
    assert h.exit_code == 0, h.log[-2000:]
    puts = _call_records(h, "pkg.store.Store.put")
    # the two calls on `store` rebuild the same fresh Store: one input; then Plain's
    assert [r["rebuilt"] for r in puts] == [True, True, True]
    shown = [
        _load_fresh(
            project,
            r["pickle_b64"],
            "(type(me).__name__, me.size, me.data, me.tag, "
            "type(me._lock).__name__, args[1:], kwargs)",
        )
        for r in puts
    ]
    assert shown == [
        repr(("Store", 3, {"a": 1}, "x", "RLock", ("z", 0), {})),
        repr(("Store", 3, {"a": 1}, "x", "RLock", ("k", 1), {})),
        repr(("Plain", 4, {}, "t", "RLock", ("p", 1), {})),
    ]
    ctors = [pickle.loads(base64.b64decode(r["ctor_b64"])) for r in puts]
    assert ctors == [((3, {"a": 1}), {"tag": "x"})] * 2 + [((4,), {})]
    # an `__init__` inherited from a base: the class call of the subclass is remembered
    (bump,) = _call_records(h, "pkg.store.Tally.bump")
    assert bump["rebuilt"] is True
    assert _load_fresh(project, bump["pickle_b64"], "(type(me).__name__, me.n)") == "('Tally', 5)"


class _Recording(pickle.Unpickler):
    """Notes every global a pickle loads; the project's classes load as inert stand-ins."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.found: set[tuple[str, str]] = set()

    def find_class(self, module: str, name: str) -> Any:
        self.found.add((module, name))
        if module.split(".")[0] == "pkg":
            return type(name, (), {"__init__": lambda self, *args, **kwargs: None})
        return super().find_class(module, name)


def test_the_rebuild_references_only_the_class_and_the_standard_library(
    rebuilt: tuple[Harvest, Path],
) -> None:
    h, _ = rebuilt
    store = _Recording(base64.b64decode(_call_records(h, "pkg.store.Store.put")[0]["pickle_b64"]))
    store.load()
    assert store.found == {("pkg.store", "Store"), ("functools", "partial")}
    tally = _Recording(base64.b64decode(_call_records(h, "pkg.store.Tally.bump")[0]["pickle_b64"]))
    tally.load()
    assert tally.found == {("pkg.store", "Tally")}


def test_without_a_remembered_class_call_the_call_is_still_dropped(
    rebuilt: tuple[Harvest, Path],
) -> None:
    h, _ = rebuilt
    # EARLY was built at import, before wrapping; Doubled's class call is not Store's __init__
    assert h.drops("pkg.store.Store.put") == Counter({RLOCK_DROP: 1, RLOCK_DROP_DOUBLED: 1})


def test_lambdas_are_recorded_by_value_with_the_module_shipped(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The same tests as above (where the lambdas are dropped: the positive control), with
    cloudpickle's module file named in the configuration: every call is recorded."""
    files = {
        "pkg/__init__.py": "from pkg.core import double\n",
        "pkg/core.py": CORE,
        "tests/test_core.py": TESTS,
    }
    keys = {"pkg.core.apply": KEYS["pkg.core.apply"]}
    settings = {"by_value": by_value_module.module_file()}
    done = _run_plugin(tmp_path_factory.mktemp("byvalue"), files, keys, settings)
    assert done.exit_code == 0, done.log[-2000:]
    assert done.drops("pkg.core.apply") == Counter()
    # loads the module
    ByValue(by_value_module.module_file(), lambda _: False).dumps(None, protocol=4)
    calls = done.calls("pkg.core.apply")
    assert [fn(x) for (fn, x), _ in calls] == [1, 2, 3, 3]


@pytest.mark.parametrize("name", sorted(PLUGIN_FILES))
def test_the_shipped_plugin_files_import_only_the_standard_library(name: str) -> None:
    """They run in the repository's environment, beside its own packages: the standard library
    and each other only (relative imports: when imported from this package on the host)."""
    tree = ast.parse(Path(str(PLUGIN_FILES[name].__file__)).read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add((node.module or "").split(".")[0])
    assert names, "no imports found: the check would prove nothing"
    siblings = {n.removesuffix(".py") for n in PLUGIN_FILES}
    outside = names - set(sys.stdlib_module_names) - siblings - {"__future__"}
    assert outside == set()
