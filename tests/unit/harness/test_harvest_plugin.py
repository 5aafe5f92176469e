"""The recording pytest plugin, run for real in a subprocess on a tiny temp project."""

from __future__ import annotations

import base64
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.harness import harvest_plugin
from tests.unit.minted import write_files

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


@pytest.fixture(scope="module")
def harvest(tmp_path_factory: pytest.TempPathFactory) -> Harvest:
    root = tmp_path_factory.mktemp("harvest")
    project = write_files(
        root / "project",
        {
            "pkg/__init__.py": "from pkg.core import double\n",
            "pkg/core.py": CORE,
            "tests/test_core.py": TESTS,
        },
    )
    plugin = root / "plugin"
    plugin.mkdir()
    shutil.copyfile(harvest_plugin.__file__, plugin / "replicate_harvest.py")
    out = root / "harvest.jsonl"
    config = {
        "targets": [
            {"key": key, "module": m, "qualname": q, "kind": k} for key, (m, q, k) in KEYS.items()
        ],
        "out": str(out),
        "max_per_target": 5,
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
    }
    argv = [sys.executable, "-m", "pytest", "-p", "replicate_harvest", "-p", "no:cacheprovider"]
    argv += ["-q", "--doctest-modules", "tests", "pkg"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    return Harvest(records, marker, done.returncode, done.stdout + done.stderr)


def test_the_tests_themselves_pass(harvest: Harvest) -> None:
    assert harvest.exit_code == 0, harvest.log[-2000:]
    assert "8 passed" in harvest.log  # 6 tests and 2 doctests


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


def test_lambdas_are_dropped_with_one_reason_per_cause(harvest: Harvest) -> None:
    assert harvest.calls("pkg.core.apply") == [((abs, -3), {})]
    drops = harvest.drops("pkg.core.apply")
    assert sum(drops.values()) == 3
    assert sorted(drops.values()) == [1, 2], drops  # module-level lambdas: one reason, not two
    assert all(r.startswith("unpicklable argument:") and "0x" not in r for r in drops)
    assert any("local object" in r for r in drops)


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
    plugin.mkdir()
    shutil.copyfile(harvest_plugin.__file__, plugin / "replicate_harvest.py")
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

    looks_large = harvest_plugin._looks_large
    assert looks_large((list(range(5001)),), {})
    assert looks_large((), {"k": "x" * 5001})
    assert looks_large((Holder(bytes(6000)),), {})
    assert not looks_large((list(range(5000)), Holder([1, 2])), {"k": "short"})
