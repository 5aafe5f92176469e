"""The reward on real minted batches: degenerate agents earn ~0 on every task, and grading is
repeatable.

Batches: more-itertools and boltons (minted once per session, tests/e2e/conftest.py) and the
bundled batch committed at the repository root (minted from corpus/samplelib).  Every check is
per task, the worst task against the limit: a few tasks that pay a degenerate program 0.5
vanish in a mean over a batch.
"""

from __future__ import annotations

import json
import shlex
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core.records import ResultRow, Verdict
from replicate.gen.baseline import CONSTANT, VISIBLE, floor
from replicate.gen.families import EMPTY, IDENTITY
from replicate.grading.grader import grade_text
from replicate.grading.reward import MAX_DEGENERATE_REWARD, normalise
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import REPO_ROOT, Minted, replicate, single_ids

AGENT = Path(__file__).with_name("degenerate_agent.py")
MEMORISE = REPO_ROOT / "tests" / "redteam" / "agents" / "memorise.py"
# return None, return <first argument>, raise ValueError, a table of the tests' literal calls
MODES = ("none", "first", "raise", "memorise")
SAMPLE = 32  # tasks per batch, spread over its modules; each mode gets every fourth one
REPEATS = 100
OTHER_SEEDS = range(1, 7)


def spread(ids: list[str], n: int) -> list[str]:
    if len(ids) <= n:
        return list(ids)
    step = len(ids) / n
    return [ids[int(k * step)] for k in range(n)]


def read_rows(run: Path) -> list[ResultRow]:
    lines = (run / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [ResultRow.model_validate_json(line) for line in lines if line.strip()]


def agent_command(mode_of: dict[str, str]) -> str:
    """One shell command that runs the degenerate agent in the mode chosen for each task (the
    red team's memorising agent for `memorise`)."""
    arms = [f"{shlex.quote(ident)}) exec {_agent(mode)} ;;" for ident, mode in mode_of.items()]
    return f'case "$REPLICATE_TASK_ID" in {" ".join(arms)} *) exit 3 ;; esac'


def _agent(mode: str) -> str:
    if mode == "memorise":
        return f"python {shlex.quote(str(MEMORISE))} e2e-memorise"
    return f"python {shlex.quote(str(AGENT))} {mode}"


@pytest.fixture(params=["more_itertools", "boltons", "bundled"])
def batch_dir(request: pytest.FixtureRequest) -> Path:
    if request.param == "bundled":
        return REPO_ROOT
    minted: Minted = request.getfixturevalue(request.param)
    return minted.batch


def test_degenerate_agents_score_near_zero(batch_dir: Path, tmp_path: Path) -> None:
    ids = spread(single_ids(Batch.open(batch_dir)), SAMPLE)
    mode_of = {ident: MODES[k % len(MODES)] for k, ident in enumerate(ids)}
    task_args = [arg for ident in ids for arg in ("--task", ident)]
    run = tmp_path / "run"
    done = replicate(
        "run", "--tasks", str(batch_dir), "--agent", agent_command(mode_of), "--out", str(run),
        "--workers", "2", "--mount", str(AGENT.parent), "--mount", str(MEMORISE.parent),
        *task_args, timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = read_rows(run)
    assert sorted(r.task_id for r in rows) == sorted(ids)
    odd = [r for r in rows if r.status != "graded" or r.agent_status != "ok"]
    assert not odd, [(r.task_id, r.status, r.agent_status, r.reason) for r in odd]
    summary = {}
    for mode in MODES:
        mine = [r for r in rows if mode_of[r.task_id] == mode]
        worst = sorted(mine, key=lambda r: -(r.reward or 0.0))
        top = (worst[0].reward or 0.0) if worst else 0.0
        detail = [(r.task_id, r.reward, r.verdict and r.verdict.raw_reward) for r in worst[:5]]
        summary[mode] = {"tasks": len(mine), "max_reward": top, "worst": detail[:3]}
        assert top <= MAX_DEGENERATE_REWARD, (mode, detail)
    print(json.dumps({"batch": str(batch_dir), "modes": summary}))


def _kind(program: str) -> str:
    """The kind of a degenerate program, for the report: constants and raises taken together."""
    other = program.removeprefix(f"{VISIBLE} ")
    if other.startswith(CONSTANT):
        kind = "return constant"
    elif other.startswith("raise "):
        kind = "raise"
    elif other == "return None":
        kind = other
    elif other.startswith((IDENTITY, EMPTY)):
        kind = " ".join(other.split()[:2])  # return parameter, return empty
    else:
        kind = "return <first argument>"
    return f"{VISIBLE} {kind}" if other != program else kind


def test_no_degenerate_program_earns_on_any_task(batch_dir: Path) -> None:
    """Every task, from its recorded baseline: each degenerate program (the tables of the
    visible calls included) is under the floor of its kind, and earns at most
    MAX_DEGENERATE_REWARD once normalised; the worst task is what is checked."""
    batch = Batch.open(batch_dir)
    worst: dict[str, tuple[float, str]] = {}
    for ident in single_ids(batch):
        found = batch.load(ident).hidden.baseline
        assert found is not None, ident
        for program in found.programs:
            assert program.raw_reward < floor(program.program), (ident, program)
            earned = normalise(program.raw_reward, found.raw_reward)
            kind = _kind(program.program)
            if earned >= worst.get(kind, (-1.0, ""))[0]:
                worst[kind] = (earned, ident)
    assert worst and max(e for e, _ in worst.values()) <= MAX_DEGENERATE_REWARD, worst
    print(json.dumps({"batch": str(batch_dir), "tasks": len(batch.ids), "worst": worst}))


def _grade_many(task: LoadedTask, text: str, seeds: list[int]) -> list[Verdict]:
    jail = Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        # shrinking only shapes the feedback, never the reward; it is left out for speed
        jobs = [
            pool.submit(grade_text, task, text, jail, hash_seed=seed, shrink=False)
            for seed in seeds
        ]
        return [job.result() for job in jobs]


# Right on some inputs; the order of its output depends on string hashing (a set).
SET_ORDER = """
def unique_everseen(items, key=None):
    if key is not None:
        seen = []
        for item in items:
            if key(item) not in seen:
                seen.append(key(item))
                yield item
        return
    yield from set(items)
"""


def test_a_hash_order_dependent_candidate_gets_the_same_reward_every_time() -> None:
    batch = Batch.open(REPO_ROOT)
    task = batch.load(batch.resolve("samplelib.iterables.unique_everseen"))
    # The candidate really depends on the hash seed: other seeds give other rewards.
    elsewhere = _grade_many(task, SET_ORDER, list(OTHER_SEEDS))
    assert len({v.raw_reward for v in elsewhere}) > 1, [v.raw_reward for v in elsewhere]
    # Grading fixes the seed, so the same candidate always gets the same reward.
    verdicts = _grade_many(task, SET_ORDER, [0] * REPEATS)
    assert all(v.status == "graded" for v in verdicts)
    rewards = {v.reward for v in verdicts}
    raw = {v.raw_reward for v in verdicts}
    assert len(rewards) == 1 and len(raw) == 1, (rewards, raw)
    (reward,) = rewards
    assert reward is not None and 0.0 < reward < 1.0  # partly right, the same every time
    print(json.dumps({"hash_order_reward": reward, "gradings": REPEATS}))
