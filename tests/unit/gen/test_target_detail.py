"""The words behind a mint drop's short reason: which part of an outcome cannot be compared,
how two runs differed, how many inputs each reason cost, what the mutants did."""

from __future__ import annotations

from collections import Counter
from typing import Any

from replicate.core.records import Strength
from replicate.gen.golden import _first_problem, _second_problem
from replicate.gen.settings import GOLDEN_SETTINGS
from replicate.gen.target_detail import drops_detail, example, strength_detail


def _returned(value: Any, *args: Any) -> dict[str, Any]:
    return {"status": "returned", "value": value, "args": list(args), "kwargs": {}}


def _int(n: int) -> dict[str, str]:
    return {"t": "int", "v": str(n)}


def _why(first: Any, second: Any = None) -> str:
    problem = _first_problem(first) or _second_problem(first, second)
    assert problem is not None
    return example(problem, first, second, GOLDEN_SETTINGS)


def test_an_outcome_that_cannot_be_compared_names_the_part_and_its_type() -> None:
    match = {"t": "opaque", "type": "re.Match"}
    assert _why(_returned({"t": "list", "v": [_int(1), match]})) == "<opaque Match> in return[1]"
    handle = {"t": "opaque", "type": "_io.TextIOWrapper"}
    assert _why(_returned(_int(1), handle)) == "<opaque TextIOWrapper> in args[0]"
    # comparable in the first run, not in the second: the second's part is named
    assert _why(_returned(_int(1)), _returned(match)) == "<opaque Match> in return"


def test_a_nondeterministic_input_shows_where_its_runs_differed() -> None:
    assert _why(_returned(_int(1)), _returned(_int(2))) == "return: 1, then 2"
    longer = _why(_returned({"t": "str", "v": "a" * 300}), _returned(_int(2)))
    assert len(longer) == 100 and longer.endswith("...")


def test_an_input_that_does_not_load_shows_its_error() -> None:
    failed = {"status": "load_error", "msg": "ModuleNotFoundError: No module named 'x'"}
    assert _why(failed) == "ModuleNotFoundError: No module named 'x'"
    assert _why({"status": "timeout"}) == ""  # a hang has nothing more to say


def test_drops_are_counted_against_the_inputs_with_an_instance_each() -> None:
    drops = Counter({"nondeterministic outcome": 3, "reference hangs": 1})
    seen = {"nondeterministic outcome": "return: 1, then 2"}
    assert drops_detail(drops, seen, 5, "traced inputs", 1) == (
        "1 of 5 traced inputs kept; nondeterministic outcome on 3 of 5 (return: 1, then 2); "
        "reference hangs on 1 of 5"
    )
    assert drops_detail(Counter(), {}, 0, "generated inputs", 0) == "no generated inputs"


def test_the_strength_detail_says_what_killed_the_mutants() -> None:
    strength = Strength(
        mutants=12,
        killed=5,
        kill_rate=5 / 12,
        killed_before=3,
        likely_equivalent=6,
        added_inputs=4,
        searched_inputs=300,
        threshold=0.5,
    )
    assert strength_detail(strength) == (
        "kill rate 0.42: 5 of 12 mutants killed (3 by the hidden inputs as minted, 2 more by 4 "
        "of 300 searched inputs added); 6 survivors likely equivalent (no searched input tells "
        "them from the reference)"
    )
