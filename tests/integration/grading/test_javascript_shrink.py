"""A JavaScript counterexample on a generated input shrunk against the original
(`grading/javascript_shrink.py`): on the tiny repository's `double`
(`redteam/javascript/minted.py`), a candidate wrong only above 100 fails first on a large
widened call; the verdict names a smaller call it is still wrong on, the expected and got sides
of that call, and the call it shrank from. A verdict without shrinking (the control) shows the
large call itself."""

from __future__ import annotations

import re

import pytest

from replicate.batch import LoadedTask
from replicate.cache import cache_root
from replicate.grading import grade_text
from replicate.jail import Jail, context_for, get_sandbox
from tests.redteam.javascript.minted import mint_tiny, tasks_by_name

WRONG_ABOVE_100 = "function double(a) { return a > 100 ? a * 3 : a * 2; }"


@pytest.fixture(scope="module")
def double(tmp_path_factory: pytest.TempPathFactory) -> LoadedTask:
    return tasks_by_name(mint_tiny(tmp_path_factory.mktemp("javascript-shrink")))["double"]


def _argument(call: str) -> float:
    found = re.fullmatch(r"double\((-?[0-9.e+]+)\)", call)
    assert found, call
    return float(found.group(1))


def test_a_counterexample_on_a_generated_input_is_shrunk(double: LoadedTask) -> None:
    jail = Jail(context_for(double.repo, cache_root()), get_sandbox("local"))
    plain = grade_text(double, WRONG_ABOVE_100, jail, shrink=False).counterexample
    assert plain is not None and plain.stratum == "widened" and plain.shrunk_from is None
    shrunk = grade_text(double, WRONG_ABOVE_100, jail).counterexample
    assert shrunk is not None and shrunk.shrunk_from == plain.call
    big, small = _argument(plain.call), _argument(shrunk.call)
    assert 100 < small < big
    assert float(shrunk.expected) == 2 * small and float(shrunk.got) == 3 * small
