"""A real runner's frames read through `replicate.jail.known_outcomes`: a run with the inputs
shown (gen's golden runs) teaches the text a later run without them writes, and that run's
outcomes are read without decoding, equal to what decoding gives and sharing the first's values
(what lets `compare` take two outcomes of one text as equal by identity)."""

from __future__ import annotations

import pytest

from replicate.jail import known_outcomes
from replicate.jail.calls import RepoContext, run_calls
from replicate.jail.known_outcomes import KNOWN
from replicate.sandbox import get_sandbox
from tests.integration.minted import Tiny


def test_a_run_without_the_inputs_shown_reads_the_golden_runs_texts(
    tiny: Tiny, tiny_ctx: RepoContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    inputs = task.inputs[:5]

    def run(encode_inputs: bool) -> dict[int, dict[str, object]]:
        done = run_calls(
            tiny_ctx, task.hidden.target, inputs, get_sandbox("local"), task.hidden.grading,
            encode_inputs=encode_inputs,
        )  # fmt: skip
        return {i: dict(o) for i, o in done.parsed.outcomes.items()}

    with monkeypatch.context() as patched:  # the control: golden texts alone teach nothing
        patched.setattr(known_outcomes, "_SHOWN", frozenset())
        KNOWN.clear()
        golden = run(True)
        plain = run(False)
        assert not any(plain[i]["value"] is golden[i]["value"] for i in golden)
    KNOWN.clear()
    golden = run(True)
    assert all("args_in" in outcome for outcome in golden.values())
    again = run(False)
    assert set(again) == set(golden) == set(plain) and golden
    for index, outcome in again.items():
        assert outcome["value"] is golden[index]["value"]  # read from the taught text
        untimed = {k: v for k, v in outcome.items() if k != "t"}
        assert untimed == {k: v for k, v in plain[index].items() if k != "t"}
    assert KNOWN.audit() == []
