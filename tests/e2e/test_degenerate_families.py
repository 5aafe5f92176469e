"""Each family of degenerate programs gen grades a task against (`replicate.gen.families`: the
identity on each parameter, each parameter's empty value, the constants) is a degenerate agent
that `replicate run` scores on real minted tasks, and earns at most MAX_DEGENERATE_REWARD
normalised on every task.

Batches: more-itertools and boltons (minted once per session, tests/e2e/conftest.py) and a fresh
mint of corpus/samplelib (the `demo` fixture's; the committed bundled batch was minted before the
families).  The run checks a sample of tasks, one family program each, against the reward and
against the raw reward gen recorded for that program; the records check every task.  The
positive control: with the families' programs taken out of the recorded baselines (what gen
computed before them), some family earns more than MAX_DEGENERATE_REWARD somewhere.  A class
task records each degenerate class and its table (`replicate.gen.class_families`); the attack
they stand for, with its positive control, is `test_class_table.py`.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from replicate.batch.store import Batch, LoadedTask
from replicate.core import Baseline, TaskKind
from replicate.gen.baseline import VISIBLE
from replicate.gen.class_families import class_programs
from replicate.gen.families import (
    EMPTY,
    IDENTITY,
    Program,
    constant_programs,
    empties,
    identities,
)
from replicate.grading.reward import MAX_BASELINE, MAX_DEGENERATE_REWARD, normalise
from tests.e2e.conftest import Demo, Minted, replicate, single_ids
from tests.e2e.test_degenerate import AGENT, read_rows, spread

FAMILIES = ("identity", "empty", "constant")
SAMPLE = 36  # tasks per batch; each family gets every third one
NEW = (IDENTITY, EMPTY)  # the families gen did not grade before (names of their programs)


def _family(task: LoadedTask, family: str) -> list[Program]:
    target = task.hidden.target
    if family == "identity":
        return identities(target)
    if family == "empty":
        return empties(target)
    return constant_programs(task.expected.values())


def _batch_dir(request: pytest.FixtureRequest, which: str) -> Path:
    if which == "demo":
        demo: Demo = request.getfixturevalue("demo")
        assert demo.done.returncode == 0, demo.done.stderr[-3000:]
        return demo.out / "batch"
    minted: Minted = request.getfixturevalue(which)
    return minted.batch


@pytest.fixture(params=["more_itertools", "boltons", "demo"])
def batch_dir(request: pytest.FixtureRequest) -> Path:
    return _batch_dir(request, request.param)


def _chosen(batch: Batch) -> dict[str, Program]:
    """One family program per sampled task: the families in turn, and within one the k-th."""
    chosen = {}
    for k, ident in enumerate(spread(single_ids(batch), SAMPLE)):
        programs = _family(batch.load(ident), FAMILIES[k % len(FAMILIES)])
        if programs:
            chosen[ident] = programs[(k // len(FAMILIES)) % len(programs)]
    return chosen


def _recorded(found: Baseline | None, name: str) -> float | None:
    programs = found.programs if found else ()
    return next((p.raw_reward for p in programs if p.program == name), None)


def test_each_family_is_an_agent_that_earns_nothing(batch_dir: Path, tmp_path: Path) -> None:
    batch = Batch.open(batch_dir)
    chosen = _chosen(batch)
    assert len(chosen) >= SAMPLE // 2, len(chosen)
    arms = [
        f"{shlex.quote(ident)}) exec python {shlex.quote(str(AGENT))} body "
        f"{shlex.quote(program.body)} ;;"
        for ident, program in chosen.items()
    ]
    command = f'case "$REPLICATE_TASK_ID" in {" ".join(arms)} *) exit 3 ;; esac'
    run = tmp_path / "run"
    task_args = [arg for ident in chosen for arg in ("--task", ident)]
    done = replicate(
        "run", "--tasks", str(batch_dir), "--agent", command, "--out", str(run),
        "--workers", "2", "--mount", str(AGENT.parent), *task_args, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = read_rows(run)
    assert sorted(r.task_id for r in rows) == sorted(chosen)
    odd = [r for r in rows if r.status != "graded" or r.agent_status != "ok"]
    assert not odd, [(r.task_id, r.status, r.agent_status, r.reason) for r in odd]
    paid = [(r.task_id, chosen[r.task_id].name, r.reward) for r in rows]
    assert max(reward or 0.0 for _, _, reward in paid) <= MAX_DEGENERATE_REWARD, paid
    # What `run` gave is what gen recorded for that program (the baseline is computed on it;
    # a verdict rounds its rewards to 6 places).
    differ = []
    for row in rows:
        recorded = _recorded(batch.load(row.task_id).hidden.baseline, chosen[row.task_id].name)
        raw = row.verdict.raw_reward if row.verdict else None
        if recorded is None or raw is None or abs(recorded - raw) > 1e-6:
            differ.append((row.task_id, chosen[row.task_id].name, recorded, raw))
    assert not differ, differ
    print(json.dumps({"batch": str(batch_dir), "graded": len(rows)}))


def test_every_task_records_every_family_under_the_limit(batch_dir: Path) -> None:
    batch = Batch.open(batch_dir)
    missing, worst = [], (0.0, "")
    for ident in single_ids(batch):
        task = batch.load(ident)
        found = task.hidden.baseline
        assert found is not None, ident
        for family in FAMILIES:
            for program in _family(task, family):
                raw = _recorded(found, program.name)
                if raw is None:
                    missing.append((ident, program.name))
                    continue
                worst = max(worst, (normalise(raw, found.raw_reward), ident))
    assert not missing, missing[:10]
    assert worst[0] <= MAX_DEGENERATE_REWARD, worst


def test_without_the_new_families_one_of_them_earns(request: pytest.FixtureRequest) -> None:
    """The positive control: the baseline gen computed before the families (their programs and
    tables left out) pays some family more than MAX_DEGENERATE_REWARD on some task."""
    paid = []
    for which in ("more_itertools", "boltons", "demo"):
        batch = Batch.open(_batch_dir(request, which))
        for ident in single_ids(batch):
            found = batch.load(ident).hidden.baseline
            assert found is not None
            before = max(
                (p.raw_reward for p in found.programs if not _is_new(p.program)), default=0.0
            )
            for program in found.programs:
                if _is_new(program.program):
                    earned = normalise(program.raw_reward, before)
                    if earned > MAX_DEGENERATE_REWARD:
                        paid.append((ident, program.program, round(earned, 2)))
    assert paid
    print(json.dumps({"paid_without_the_families": len(paid), "first": paid[:5]}))


def _is_new(program: str) -> bool:
    return program.removeprefix("visible calls, else ").startswith(NEW)


def test_every_class_task_records_every_class_family_under_the_limit(
    batch_dir: Path,
) -> None:
    """Each class task, on its own: every degenerate class (`gen.class_families`) and the table
    of the visible calls in front of it recorded, under the floor, and earning at most
    MAX_DEGENERATE_REWARD once normalised."""
    batch = Batch.open(batch_dir)
    missing, worst = [], (0.0, "")
    for ident in batch.ids:
        task = batch.load(ident)
        if task.spec.task_kind is not TaskKind.CLASS:
            continue
        found = task.hidden.baseline
        assert found is not None, ident
        for program in class_programs(task.hidden.target):
            for name in (program.name, f"{VISIBLE} {program.name}"):
                raw = _recorded(found, name)
                if raw is None:
                    missing.append((ident, name))
                    continue
                assert raw < MAX_BASELINE, (ident, name, raw)
                worst = max(worst, (normalise(raw, found.raw_reward), ident))
    assert not missing, missing[:10]
    assert worst[0] <= MAX_DEGENERATE_REWARD, worst
