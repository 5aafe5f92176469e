"""A class task's call sequence, replayed in the real jail on a candidate whose fault shows only
in a later state: the comparison fails at that step, and the counterexample is the shortest
failing prefix shrunk by dropping the steps it does not need (the positive control: unshrunk,
the prefix keeps them)."""

from __future__ import annotations

import base64
import pickle
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

from replicate.batch import LoadedTask
from replicate.core import (
    CallSequence,
    ClassRef,
    GradingSettings,
    HiddenSequence,
    SequenceStratum,
    Step,
    StepOutcome,
)
from replicate.grading.class_sequences import (
    replay_candidate,
    score_sequences,
    sequence_counterexample,
)
from replicate.jail import Jail, replay
from replicate.jail.calls import RepoContext
from replicate.sandbox.base import Sandbox

ORIGINAL = "        self.total += amount\n        return self.total\n"
# wrong only when 3 is added to a total an earlier call made
MUTANT = (
    "        self.total += amount\n"
    "        if amount == 3 and self.total > 3:\n"
    "            self.total += 1\n"
    "        return self.total\n"
)


def _step(name: str, *args: Any) -> Step:
    blob = base64.b64encode(pickle.dumps((args, {}), protocol=4)).decode("ascii")
    return Step(name=name, args_b64=blob, outcome=StepOutcome.UNRECORDED)


def widened(jail: Jail, sequence: CallSequence, settings: GradingSettings) -> HiddenSequence:
    """`sequence` as a widened hidden sequence, the reference's replay of it expected."""
    (expected,) = replay(jail, sequence.cls, [sequence], settings)
    return HiddenSequence(
        index=0,
        stratum=SequenceStratum.WIDENED,
        sequence=sequence,
        steps=tuple(map(dict, expected.steps)),
        state=expected.state,
    )


def test_the_counterexample_is_the_failing_prefix_shrunk(
    tiny_task: Callable[[str], LoadedTask], tiny_ctx: RepoContext, local_sandbox: Sandbox
) -> None:
    method = tiny_task("tinypkg.core.Counter.add")
    target, settings = method.hidden.target, method.hidden.grading
    cls = ClassRef(path=target.path, module=target.module, qualname="Counter")
    source = method.original_source().decode("utf-8")
    assert source.count(ORIGINAL) == 1
    mutant = source.replace(ORIGINAL, MUTANT).encode("utf-8")
    adds = (1, 5, 2, 3, 1)
    sequence = CallSequence(
        cls=cls, ending="widened", steps=(_step("__init__", 0), *(_step("add", n) for n in adds))
    )
    jail = Jail(tiny_ctx, local_sandbox)
    hidden = widened(jail, sequence, settings)
    task = cast(
        LoadedTask,
        SimpleNamespace(
            sequences=(hidden,),
            hidden=SimpleNamespace(target=cls, grading=settings),
        ),
    )
    assert (
        score_sequences(task, cast(Any, replay_candidate(task, source.encode(), jail))).reward == 1
    )
    score = score_sequences(task, cast(Any, replay_candidate(task, mutant, jail)))
    assert score is not None and score.comparisons[0].first_failing == 4  # add(3) on 8
    whole = sequence_counterexample(task, score, mutant, jail, shrink=False)
    assert whole is not None and whole.call.count("x.add(") == 4  # the failing prefix
    assert whole.stratum == "widened" and whole.shrunk_from is None
    found = sequence_counterexample(task, score, mutant, jail, shrink=True)
    assert found is not None
    # one earlier add is needed (a total above 3 before the 3 is added), and no more
    assert found.call == "x = Counter(0); x.add(2) -> 2; x.add(3) -> 5"
    assert found.expected == "5" and "got 6" in found.got
    assert found.shrunk_from == "Counter: 5 steps"
    assert "shrunk to 3" in found.detail
