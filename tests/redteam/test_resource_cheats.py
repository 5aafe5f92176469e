"""Red team, resources and time (catalogue items 11 and 12 of docs/design.md §5), on both sides: the
candidate at grade time and the agent itself.

Outside a sandbox the bombs run bounded (REDTEAM_SAFE=1) and each test shows what they do to a
naive grader or harness there: the grader hangs or crashes, processes outlive it, memory and
output have no cap.  Through `replicate run` (one shared run, agents limited to 8 s) the same
attacks, unbounded, must earn 0, let the run finish and leave nothing running.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from replicate.agents.protocol import AGENT_LIMITS
from tests.redteam.conftest import Controls, Launcher
from tests.redteam.naive import NaiveOptions, NaiveResult
from tests.redteam.scenario import (
    CONTROL,
    Attack,
    DefenceMissing,
    GroupRun,
    check_defended,
    check_per_call_limit,
    demonstrate,
    kill_marked,
    late_reward,
    marked_pids,
    naive_grade,
    naive_late,
    run_agent_on_host,
    run_group,
    slow_args,
    task,
)

AGENT_TIMEOUT_S = 12.0
LOOP = Attack(
    "endless-loop-ignoring-sigalrm",
    11,
    "samplelib.numeric.gcd_list",
    "hang_candidate.py",
    ("loop",),
)
SLOW = Attack(
    "slow-correct-ignoring-sigalrm",
    11,
    "samplelib.text.common_prefix",
    "hang_candidate.py",
    slow_args("samplelib.text.common_prefix", "slow"),
    max_reward=late_reward("samplelib.text.common_prefix"),
    naive=NaiveOptions(call_timeout=0.3),
    baseline=slow_args("samplelib.text.common_prefix", "slow-plain"),
)
HANG_AGENT = Attack("agent-never-exits", 11, "samplelib.numeric.collatz_steps", "hang_agent.py")
FORK = Attack(
    "fork-storm-at-call", 12, "samplelib.iterables.pairwise", "bomb_candidate.py", ("fork",)
)
MEMORY = Attack(
    "memory-bomb-at-call", 12, "samplelib.iterables.split_when", "bomb_candidate.py", ("memory",)
)
FLOOD = Attack(
    "output-flood-at-call", 12, "samplelib.functional.map_values", "bomb_candidate.py", ("flood",)
)
HUGE = Attack(
    "huge-always-equal-return",
    12,
    "samplelib.iterables.interleave",
    "bomb_candidate.py",
    ("huge",),
    naive=NaiveOptions(call_timeout=10.0),  # building the value is slow on a busy machine
)
DEEP = Attack(
    "deep-recursion-and-deep-json",
    12,
    "samplelib.shapes.Matrix.shape",
    "bomb_candidate.py",
    ("deep",),
)
BOMB_AGENT = Attack("agent-fork-memory-output-bombs", 12, "samplelib.text.slugify", "bomb_agent.py")
ATTACKS = [LOOP, SLOW, HANG_AGENT, FORK, MEMORY, FLOOD, HUGE, DEEP, BOMB_AGENT]
JAIL_MEMORY_MB = task(MEMORY.symbol).hidden.grading.memory_mb


@pytest.fixture(scope="module")
def group(backend: str, launcher: Launcher, tmp_path_factory: pytest.TempPathFactory) -> GroupRun:
    def start(name: str) -> GroupRun:
        out = tmp_path_factory.mktemp(f"resources-{name}") / "run"
        return run_group([*ATTACKS, CONTROL], name, out, timeout_s=AGENT_TIMEOUT_S)

    return launcher.group("resources", backend, start)


def naive_of(
    attack: Attack, root: Path, jobs: Path, options: NaiveOptions | None = None
) -> tuple[NaiveResult, bool]:
    """Naive grade of what the agent left (bounded bombs); whether marked processes outlived it."""
    ran = run_agent_on_host(attack, root)
    assert ran.exit_code == 0, ran.output[-2000:]
    opts = dataclasses.replace(options or attack.naive, env={"REDTEAM_SAFE": "1"})
    try:
        result = naive_grade(attack, ran.workspace, jobs, opts)
        return result, bool(marked_pids(attack.host().marker))
    finally:
        kill_marked(attack.host().marker)


def test_endless_loop_ignoring_sigalrm(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    calls = len(task(LOOP.symbol).inputs)
    options = NaiveOptions(call_timeout=0.2, timeout_s=0.2 * calls + 4)
    hung = controls.once(LOOP.name, lambda: naive_of(LOOP, tmp_path, jobs, options)[0].timed_out)
    assert hung, "the naive grader's in-process limit stopped the loop"
    check_defended(group, LOOP)


def test_slow_correct_ignoring_sigalrm(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    baseline = SLOW.baseline
    naive = controls.once(SLOW.name, lambda: demonstrate(SLOW, tmp_path / "naive", jobs).reward)
    honest = controls.once(
        SLOW.name + "/baseline",
        lambda: demonstrate(SLOW, tmp_path / "baseline", jobs, args=baseline).reward,
    )
    assert naive == 1.0, "the naive grader's limit stops the slow calls that ignore SIGALRM"
    assert honest == pytest.approx(naive_late(SLOW)), "its limit misses the plain slow calls"
    check_defended(group, SLOW)
    check_per_call_limit(group, SLOW)


def outlives_naive_harness(attack: Attack, root: Path, timeout_s: float) -> tuple[int, bool, bool]:
    """Run the agent like a naive harness (a timeout that kills only the shell): how much it
    wrote, whether it ran out of time, and whether any of its processes outlived the harness."""
    ran = run_agent_on_host(attack, root, timeout_s=timeout_s)
    try:
        return len(ran.output), ran.timed_out, bool(marked_pids(attack.host().marker))
    finally:
        kill_marked(attack.host().marker)


def test_agent_that_never_exits(group: GroupRun, tmp_path: Path, controls: Controls) -> None:
    _, timed_out, outlived = controls.once(
        HANG_AGENT.name, lambda: outlives_naive_harness(HANG_AGENT, tmp_path, 3)
    )
    assert timed_out and outlived, "nothing outlived a naive harness"
    check_defended(group, HANG_AGENT)
    row = group.row(HANG_AGENT)
    if row["agent_status"] != "timeout" or row["duration_s"] > AGENT_TIMEOUT_S + 45:
        raise DefenceMissing(f"the agent was not stopped at --timeout: {row}")
    left = group.out / "candidates" / row["task_id"] / "0.py"
    if HANG_AGENT.marker not in left.read_text("utf-8"):
        raise DefenceMissing("what the agent left before its timeout was not what got graded")


def test_fork_storm_at_call(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    options = NaiveOptions(timeout_s=4)
    outlived = controls.once(FORK.name, lambda: naive_of(FORK, tmp_path, jobs, options)[1])
    assert outlived, "no forked process outlived the naive grader"
    check_defended(group, FORK)


def allocated_mb(root: Path, jobs: Path) -> int:
    naive, _ = naive_of(MEMORY, root, jobs, NaiveOptions(call_timeout=10.0))
    return max((int(n) for n in re.findall(rb"ALLOCATED_MB (\d+)", naive.output)), default=0)


def test_memory_bomb_at_call(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    allocated = controls.once(MEMORY.name, lambda: allocated_mb(tmp_path, jobs))
    assert allocated > JAIL_MEMORY_MB, f"the naive grader capped memory at {allocated} MB"
    check_defended(group, MEMORY)


def test_output_flood_at_call(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    size = controls.once(FLOOD.name, lambda: len(naive_of(FLOOD, tmp_path, jobs)[0].output))
    assert size >= 32 << 20, "the naive grader capped the output"
    check_defended(group, FLOOD)


def test_huge_always_equal_return(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    reward = controls.once(HUGE.name, lambda: naive_of(HUGE, tmp_path, jobs)[0].reward)
    assert reward == 1.0
    check_defended(group, HUGE)


def downs_the_naive_grader(root: Path, jobs: Path) -> bool:
    """Whether the naive grader itself goes down (RecursionError) parsing the channel."""
    try:
        naive_of(DEEP, root, jobs)
    except RecursionError:
        return True
    return False


def test_deep_recursion_and_deep_json(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    assert controls.once(DEEP.name, lambda: downs_the_naive_grader(tmp_path, jobs))
    check_defended(group, DEEP)


def test_agent_fork_memory_and_output_bombs(
    group: GroupRun, tmp_path: Path, controls: Controls
) -> None:
    size, _, outlived = controls.once(
        BOMB_AGENT.name, lambda: outlives_naive_harness(BOMB_AGENT, tmp_path, 6)
    )
    assert size >= 16 << 20, "the naive harness capped the agent's output"
    assert outlived, "no bomb outlived the naive harness"
    check_defended(group, BOMB_AGENT)
    row = group.row(BOMB_AGENT)
    if row["agent_status"] != "timeout":
        raise DefenceMissing(f"the bombing agent was not stopped: {row}")
    notes = (group.out / "candidates" / row["task_id"] / "0.py").read_text("utf-8")
    allocated = max(int(n) for n in re.findall(r"# rt-allocated-mb (\d+)", notes) or ["0"])
    forked = notes.count("# rt-forked")
    if allocated > (AGENT_LIMITS.memory_mb or 0) or forked > (AGENT_LIMITS.pids or 0):
        raise DefenceMissing(f"agent limits did not hold: {allocated} MB, {forked} processes")
