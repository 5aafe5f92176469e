"""End to end on real public code: more-itertools 10.5.0 and boltons 24.1.0, each minted once per
session by the real CLI (fixtures in conftest.py), then graded, run and resumed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core.records import ResultRow, Verdict
from replicate.grading.grader import grade_text, original_source
from replicate.jail import Jail
from replicate.jail.by_value_module import needs_module
from replicate.jail.calls import RepoContext
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import Minted, minimum_breaches, replicate, sparse_tasks

# Validated-task floors per library (the Minted.name of each fixture).
FLOORS = {"more-itertools 10.5.0": 40, "boltons 24.1.0": 20}
# gen's wall time in paces of this machine (`machine_pace`); generous: a guard against a gen gone
# slow, not a benchmark.  Measured 2026-12-01 on a slow day (a pace of 0.167 s): boltons 792 s =
# ~4700 paces, more-itertools 423 s = ~2500.  The plain-seconds guard it replaces (600 s) passed
# on one CI machine and failed on the next with the same code.
GEN_GUARD_PACES = 8000.0
CLI_SAMPLE = 3  # tasks per library graded through `replicate grade` (one process each)
COPY_SAMPLE = 10  # tasks per library run with the agent that copies the original into place


def task_ids(batch: Path) -> list[str]:
    return sorted(p.parent.name for p in (batch / "specs").glob("*/task.json"))


def spread(ids: list[str], n: int) -> list[str]:
    """n ids spread evenly over the sorted list (so different modules are sampled)."""
    if len(ids) <= n:
        return list(ids)
    step = len(ids) / n
    return [ids[int(k * step)] for k in range(n)]


def describe(verdict: Verdict) -> str:
    text = f"{verdict.task_id}: reward={verdict.reward} status={verdict.status} ({verdict.reason})"
    cx = verdict.counterexample
    if cx is not None:
        text += f"\n    input #{cx.index} {cx.call}\n    expected {cx.expected}\n    got {cx.got}"
        text += f" {cx.detail}" if cx.detail else ""
    return text


def read_rows(run: Path) -> list[ResultRow]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [ResultRow.model_validate_json(line) for line in lines if line.strip()]


def test_gen_meets_floor_and_time(public_batch: Minted) -> None:
    floor = FLOORS[public_batch.name]
    validated = public_batch.stage("validated")
    on_disk = task_ids(public_batch.batch)
    assert validated >= floor, json.dumps(public_batch.funnel, indent=1)[:4000]
    assert len(on_disk) == validated, (len(on_disk), validated)
    assert public_batch.stage("extracted") >= validated
    paces = public_batch.wall_s / public_batch.pace_s
    assert paces < GEN_GUARD_PACES, f"gen took {public_batch.wall_s:.0f} s = {paces:.0f} paces"


def test_every_task_keeps_the_input_minimums(public_batch: Minted) -> None:
    assert minimum_breaches(public_batch.batch) == []


def test_functions_the_tests_call_once_or_twice_become_tasks(more_itertools: Minted) -> None:
    """more-itertools' tests call some functions once or twice; those mint when their generated
    inputs kill the mutants (the minimums above hold them to that rule)."""
    sparse = sparse_tasks(more_itertools.batch)
    assert sparse, json.dumps(more_itertools.funnel, indent=1)[:4000]
    assert not set(sparse) & set(minimum_breaches(more_itertools.batch))


def _grade_all(batch: Batch, ids: list[str]) -> Iterator[Verdict]:
    sandbox = get_sandbox("local")
    contexts: dict[str, RepoContext] = {}
    tasks: list[LoadedTask] = [batch.load(i) for i in ids]
    for task in tasks:  # one environment per repository, built before the threads start
        if task.hidden.repo_dir not in contexts:
            contexts[task.hidden.repo_dir] = context_for(task.repo, cache_root())

    def one(task: LoadedTask) -> Verdict:
        text = original_source(task).decode("utf-8")
        return grade_text(task, text, Jail(contexts[task.hidden.repo_dir], sandbox))

    with ThreadPoolExecutor(max_workers=2) as pool:
        yield from pool.map(one, tasks)


def test_every_original_scores_one(public_batch: Minted) -> None:
    """The same code path as `replicate grade`, for every task, in this one process."""
    batch = Batch.open(public_batch.batch)
    verdicts = list(_grade_all(batch, list(batch.ids)))
    assert len(verdicts) == len(batch.ids) >= FLOORS[public_batch.name]
    bad = [v for v in verdicts if not (v.status == "graded" and v.reward == 1.0)]
    assert not bad, "originals that do not score 1.0:\n" + "\n".join(map(describe, bad))


def test_originals_score_one_through_the_cli(public_batch: Minted, tmp_path: Path) -> None:
    batch = Batch.open(public_batch.batch)
    for ident in spread(list(batch.ids), CLI_SAMPLE):
        candidate = tmp_path / f"{ident}.py"
        candidate.write_bytes(original_source(batch.load(ident)))
        done = replicate(
            "grade", "--tasks", str(public_batch.batch), "--task", ident,
            "--candidate", str(candidate), timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        verdict = Verdict.model_validate_json(done.stdout)
        assert (verdict.task_id, verdict.status, verdict.reward) == (ident, "graded", 1.0), (
            describe(verdict)
        )


IGNORES_PRED = '''def split_at(iterable, pred, maxsplit=-1, keep_separator=False):
    """Ignores `pred`: never splits."""
    return [list(iterable)]
'''


def test_functions_whose_tests_pass_lambdas_become_tasks(
    more_itertools: Minted, tmp_path: Path
) -> None:
    """more-itertools' tests pass lambdas to its higher-order functions: those calls travel by
    value, the tasks mint, and a candidate that ignores the callable is told apart."""
    batch = Batch.open(more_itertools.batch)
    by_value = [i for i in batch.ids if needs_module(x.pickle_b64 for x in batch.load(i).inputs)]
    assert len(by_value) >= 5, by_value
    (ident,) = [i for i in by_value if "__more_itertools.more.split_at__" in i]
    rewards = {}
    for name, source in (
        ("reference", original_source(batch.load(ident))),
        ("ignores pred", IGNORES_PRED.encode()),
    ):
        candidate = tmp_path / f"{name}.py"
        candidate.write_bytes(source)
        done = replicate(
            "grade", "--tasks", str(more_itertools.batch), "--task", ident,
            "--candidate", str(candidate), timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        rewards[name] = Verdict.model_validate_json(done.stdout).reward
    assert rewards["reference"] == 1.0 and rewards["ignores pred"] < 1.0, rewards


def test_candidate_that_does_not_parse_scores_zero(public_batch: Minted, tmp_path: Path) -> None:
    ident = task_ids(public_batch.batch)[0]
    candidate = tmp_path / "broken.py"
    candidate.write_text("def oops(:\n    return (\n", encoding="utf-8")
    done = replicate(
        "grade", "--tasks", str(public_batch.batch), "--task", ident,
        "--candidate", str(candidate), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = json.loads(done.stdout)
    assert verdict["status"] == "graded"
    assert verdict["reward"] == 0.0
    assert "parse" in verdict["reason"], verdict["reason"]


def _run(minted: Minted, run: Path, agent: str, *extra: str) -> None:
    done = replicate(
        "run", "--tasks", str(minted.batch), "--agent", agent, "--out", str(run),
        "--workers", "2", *extra, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]


def test_agent_copying_the_original_scores_one(public_batch: Minted, tmp_path: Path) -> None:
    """Proves the protocol variables and that the workspace's target file is what gets graded."""
    batch = Batch.open(public_batch.batch)
    originals = tmp_path / "originals"
    originals.mkdir()
    chosen = spread(list(batch.ids), COPY_SAMPLE)
    for ident in chosen:
        (originals / f"{ident}.py").write_bytes(original_source(batch.load(ident)))
    agent = f'cp {originals}/"$REPLICATE_TASK_ID".py "$REPLICATE_TARGET_FILE"'
    run = tmp_path / "run"
    selection = [arg for ident in chosen for arg in ("--task", ident)]
    _run(public_batch, run, agent, "--mount", str(originals), *selection)
    rows = read_rows(run)
    assert sorted(r.task_id for r in rows) == sorted(chosen)
    bad = [r for r in rows if (r.reward, r.status, r.agent_status) != (1.0, "graded", "ok")]
    assert not bad, "\n".join(describe(r.verdict) + f" agent={r.agent_status}" for r in bad)
