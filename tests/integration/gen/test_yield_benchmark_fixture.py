"""A target handed pytest-benchmark's `benchmark` fixture is recorded with a stand-in for it.

Where the tests call the target through the fixture (`benchmark(target, *args)`), the fixture
calls the target with those arguments, and those are what the harvest records (the fixture is no
argument of the target's: `tests/integration/harvest/test_harvest_benchmarks.py`). What drops a
target is the fixture handed to it: a library's helper that runs a function under it, or a
benchmark module's functions, collected by pytest but named like library code. The fixture holds
its logger and session, and does not pickle ("argument does not pickle: BenchmarkFixture holding
a Logger"). Now it is recorded as what `--benchmark-disable` makes of it: the benchmarked call,
run once, its value returned. The control ships the harvest without that stand-in.

Builds an environment with pytest-benchmark from the package index (~1 min).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.gen.drop_classes import before_and_after

pytestmark = pytest.mark.e2e

CORE = '''"""Pairs of `key=value`, parsed; and parsed under a benchmark."""


def parse_pairs(text, sep=","):
    """The (key, value) pairs of `text`, values as ints where they are digits."""
    pairs = []
    for part in text.split(sep):
        if not part.strip():
            continue
        key, _, value = part.partition("=")
        value = value.strip()
        pairs.append((key.strip(), int(value) if value.isdigit() else value))
    return pairs


def timed_parse(benchmark, text, sep=","):
    """The pairs of `text`, parsed under `benchmark` (pytest-benchmark's fixture); with the
    number of pairs recorded in its extra information."""
    pairs = benchmark(parse_pairs, text, sep)
    benchmark.extra_info["pairs"] = len(pairs)
    return pairs
'''

TESTS = """import pytest

from timing.core import timed_parse


@pytest.mark.parametrize(
    "text, sep, expected",
    [
        ("a=1,b=2", ",", [("a", 1), ("b", 2)]),
        ("x = y ; z=10", ";", [("x", "y"), ("z", 10)]),
        ("", ",", []),
        ("k=v,,n=07", ",", [("k", "v"), ("n", 7)]),
    ],
)
def test_timed_parse(benchmark, text, sep, expected):
    assert timed_parse(benchmark, text, sep) == expected
"""

FILES = {
    "pyproject.toml": (
        '[project]\nname = "timing"\nversion = "0.1.0"\n\n'
        '[project.optional-dependencies]\ntest = ["pytest-benchmark"]\n'
    ),
    "timing/__init__.py": "",
    "timing/core.py": CORE,
    "tests/test_core.py": TESTS,
}
TIMED = "timing.core.timed_parse"
WITHOUT = {
    "replicate_harvest_by_value_pickler.py": (
        'elif kind.__name__ == "BenchmarkFixture":',
        "elif False:",
    )
}


def test_a_target_handed_the_benchmark_fixture_is_minted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before, _ = before_and_after(tmp_path, FILES, WITHOUT, monkeypatch, (TIMED,))
    assert before.reasons((TIMED,)) == {
        TIMED: "argument does not pickle: BenchmarkFixture holding a Logger"
    }
    # the benchmarked function itself was recorded either way, with the arguments it was given
    assert before.kept(("timing.core.parse_pairs",)) == ["timing.core.parse_pairs"]
