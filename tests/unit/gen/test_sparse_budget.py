"""Which widening budget `mint_target` gives the golden runs: a sparse one where the tests call
a target fewer than 3 times and the strength check will vouch for the generated inputs."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from replicate.core import DropReason
from replicate.core.records import Target
from replicate.gen import target as mint
from replicate.gen.golden import Golden
from replicate.harvest import HarvestedCall
from replicate.inputs import Budget
from tests.targets import made_target

TARGET = made_target(
    "Bag.size", "method", "    def size(self):", body_indent="        ", class_name="Bag"
)


def _budget_given(monkeypatch: pytest.MonkeyPatch, calls: int, kill_rate: float | None) -> Any:
    seen: list[Budget | None] = []

    def golden(jail: Any, target: Target, inputs: Any, budget: Any, ctors: Any) -> Golden:
        seen.append(budget)
        return Golden(
            (), {}, 0, Counter(), 0.0, 0.0, f"{DropReason.RUNNER_DID_NOT_START}: the budget is seen"
        )

    monkeypatch.setattr(mint, "golden", golden)
    recorded = [HarvestedCall("eA==", f"t::{n}") for n in range(calls)]
    found = mint.mint_target(None, None, "r", TARGET, recorded, min_kill_rate=kill_rate)  # type: ignore[arg-type]
    assert isinstance(found, mint.Dropped)
    return seen[0]


def test_a_target_the_tests_call_once_or_twice_widens_at_the_sparse_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for calls in (1, 2):
        assert _budget_given(monkeypatch, calls, 0.5).self_share == mint.SPARSE_SELF_SHARE
    assert Budget().self_share < mint.SPARSE_SELF_SHARE


def test_others_and_unvouched_ones_keep_the_usual_share(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _budget_given(monkeypatch, 3, 0.5) == Budget()
    assert _budget_given(monkeypatch, 1, None) == Budget()  # no strength check to vouch
