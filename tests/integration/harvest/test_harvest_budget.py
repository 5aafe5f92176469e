"""The recorder's budget: distinct calls, a share per test item, hot loops let be.

The plugin runs for real (a pytest subprocess, no sandbox) on a project whose suite starts with
hot loops and ends with parametrized cases; the former attempt budget, run on the same project,
is the positive control.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from replicate.harvest import budget as harvest_budget
from replicate.harvest.collect import _parse
from replicate.harvest.detail import harvest_detail
from tests.integration.harvest.test_harvest_plugin import Harvest, _run_plugin

CORE = """
class Box:
    def __init__(self, n):
        self.n = n


def scale(x):
    return x * 2


def weigh(box):
    return box.n * 2


def label(n):
    return f"#{n}"
"""

TESTS = """
import pytest

from pkg.core import Box, label, scale, weigh


def test_hot_loop():  # a benchmark's loop: one argument, thousands of times
    for _ in range(5000):
        assert scale(-1) == -2


def test_hot_objects():  # the same with an argument that is not a plain value
    box = Box(-1)
    for _ in range(5000):
        assert weigh(box) == -2


def test_wide_loop():  # one test item with many distinct calls
    for n in range(100):
        assert label(n) == f"#{n}"


@pytest.mark.parametrize("n", range(40))
def test_cases(n):
    assert scale(n) == 2 * n
    assert weigh(Box(n)) == 2 * n
    assert label(1000 + n) == f"#{1000 + n}"
"""

KEYS = {
    "pkg.core.scale": ("pkg.core", "scale", "function"),
    "pkg.core.weigh": ("pkg.core", "weigh", "function"),
    "pkg.core.label": ("pkg.core", "label", "function"),
}
FILES = {"pkg/__init__.py": "", "pkg/core.py": CORE, "tests/test_core.py": TESTS}
MAX = 60  # attempts under the former budget: 180, fewer than the hot loops make


def _harvest(root: Path, budget: str) -> Harvest:
    return _run_plugin(root, FILES, KEYS, {"max_per_target": MAX, "budget": budget})


@pytest.fixture(scope="module")
def distinct(tmp_path_factory: pytest.TempPathFactory) -> Harvest:
    return _harvest(tmp_path_factory.mktemp("distinct"), "distinct")


@pytest.fixture(scope="module")
def attempts(tmp_path_factory: pytest.TempPathFactory) -> Harvest:
    return _harvest(tmp_path_factory.mktemp("attempts"), "attempts")


def _cases(h: Harvest, key: str) -> list[str]:
    return [o for o in h.origins(key) if "test_cases[" in o]


def _stats(h: Harvest, key: str) -> dict[str, Any]:
    (found,) = [r for r in h.records if r["rec"] == "stats" and r["key"] == key]
    return found


def test_the_tests_pass(distinct: Harvest, attempts: Harvest) -> None:
    assert distinct.exit_code == 0 and attempts.exit_code == 0, distinct.log[-2000:]


def test_the_former_budget_loses_the_parametrized_cases(attempts: Harvest) -> None:
    assert attempts.calls("pkg.core.scale") == [((-1,), {})]
    assert _cases(attempts, "pkg.core.scale") == []
    assert _cases(attempts, "pkg.core.weigh") == []
    assert _stats(attempts, "pkg.core.scale")["spent_in"] == "tests/test_core.py::test_hot_loop"


def test_every_parametrized_case_is_recorded_after_hot_loops(distinct: Harvest) -> None:
    for key in ("pkg.core.scale", "pkg.core.weigh"):
        cases = _cases(distinct, key)
        assert len(cases) == 40, key
        assert len(distinct.calls(key)) == 41, key  # and the hot loop's one call
    assert sorted(n for ((n,), _) in distinct.calls("pkg.core.scale")) == [-1, *range(40)]


def test_one_test_item_leaves_a_share_for_later_tests(distinct: Harvest) -> None:
    share = harvest_budget.share_of(MAX)
    origins = Counter(distinct.origins("pkg.core.label"))
    assert origins["tests/test_core.py::test_wide_loop"] == MAX - share < 100
    assert len(_cases(distinct, "pkg.core.label")) == share


def test_stats_say_how_often_and_where(distinct: Harvest) -> None:
    scale = _stats(distinct, "pkg.core.scale")
    assert scale["calls"] == 5040 and scale["distinct"] == 41 and scale["recorded"] == 41
    assert scale["busiest"] == "tests/test_core.py::test_hot_loop"
    assert scale["busiest_calls"] == 5000
    assert scale["stopped"] == {"repeats": 1} and scale["spent_in"] == ""
    weigh = _stats(distinct, "pkg.core.weigh")
    # not plain: each call is pickled to be told apart, until the test's attempts are used
    assert weigh["stopped"] == {"attempts used": 1}
    assert _stats(distinct, "pkg.core.label")["spent_in"].startswith("tests/test_core.py::")


def test_the_detail_tells_the_starved_story(attempts: Harvest, tmp_path: Path) -> None:
    out = tmp_path / "harvest.jsonl"
    out.write_text("".join(json.dumps(r) + "\n" for r in attempts.records))
    parsed = _parse(out, tmp_path)
    assert parsed.stats["pkg.core.scale"].recorded == 1
    assert harvest_detail(parsed, "pkg.core.scale") == (
        "called 5040 times in 41 tests with 1 distinct argument seen"
        " (5000 in test tests/test_core.py::test_hot_loop);"
        " traced 1 (budget spent in test tests/test_core.py::test_hot_loop)"
    )
