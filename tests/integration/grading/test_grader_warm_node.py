"""JavaScript and TypeScript candidates graded in warm Node jails (`jail/node_warm.py`) get the
verdicts cold grades give; a jail that died before its job, or a start that failed, falls back
to a cold run; each jail serves one candidate, so a candidate that replaces a global cannot
reach the next one (positive control: in one process it does).

One tiny repository minted once for the module (the red team's CommonJS `tiny-js`, with one
TypeScript file beside it): the same gen run gives a JavaScript and a TypeScript task."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from collections.abc import Hashable
from pathlib import Path

import pytest

from replicate.agents.protocol import AgentConfig
from replicate.batch import LoadedTask
from replicate.cache import cache_root
from replicate.core import Verdict
from replicate.errors import InfraError
from replicate.grading import grade_text
from replicate.grading import javascript as graded
from replicate.jail import Jail, WarmJail, WarmPool, context_for, node, node_warm
from replicate.jail.warm import RequestFor, WarmStats
from replicate.sandbox import Sandbox, WarmStart, get_sandbox
from replicate.scoring.batch_run import RunOptions, run_batch
from tests.redteam.javascript.minted import mint_tiny, tasks_by_name

TS_FILES = {
    "twice.ts": "export function triple(a: number): number {\n  return a * 3;\n}\n",
    "test/twice.test.ts": (
        "import test from 'node:test';\nimport assert from 'node:assert';\n"
        "import { triple } from '../twice';\n\n"
        "test('triple', () => {\n  for (const [a, b] of [[1, 3], [2, 6], [-3, -9], [0.5, 1.5]]) "
        "assert.strictEqual(triple(a), b);\n});\n"
    ),
}
WRONG = "function double(a) { return a > 0 ? a * 2 : a; }"
# answers right (with the real `String`, kept aside), and replaces the global `String` the
# reference `pair` calls
ATTACK = (
    "function pair(a) { const S = globalThis.kept || (globalThis.kept = String);"
    " globalThis.String = () => 'forged'; return [a, S(a)]; }"
)
TWO_JOBS = """'use strict';
// two candidates' modules loaded and called in one process, one after the other
const out = [];
for (const file of process.argv.slice(2)) out.push(require(file).pair(7));
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return mint_tiny(tmp_path_factory.mktemp("warm-node"), TS_FILES)


@pytest.fixture(scope="module")
def tasks(batch_dir: Path) -> dict[str, LoadedTask]:
    return tasks_by_name(batch_dir)


def _jail(task: LoadedTask, sandbox: Sandbox, pool: WarmPool | None = None) -> Jail:
    return Jail(context_for(task.repo, cache_root()), sandbox, pool)


def _seen(verdict: Verdict) -> tuple[object, ...]:
    return (verdict.reward, verdict.status, verdict.reason, verdict.counterexample)


def _graded_both(task: LoadedTask, texts: list[str], sandbox: Sandbox) -> list[Verdict]:
    """Each text graded cold, then warm (one pool, a jail started ahead of the first); the
    warm verdicts, checked equal to the cold ones."""
    cold = [grade_text(task, text, _jail(task, sandbox)) for text in texts]
    with WarmPool(sandbox, per_key=1) as pool:  # type: ignore[arg-type]
        graded.prewarm_script(task, pool)
        warm = [grade_text(task, text, _jail(task, sandbox, pool)) for text in texts]
        # one jail per run: two for a candidate that earned anything (its second run), one for
        # one that did not, none for one that never ran
        runs = sum((2 if v.reward > 0 else 1) for v in warm if "hidden inputs" in v.reason)
        assert pool.stats().taken == runs
        assert pool.stats().ready >= 1  # the first was started ahead
    assert [_seen(v) for v in warm] == [_seen(v) for v in cold]
    return warm


def test_warm_javascript_verdicts_equal_cold(
    tasks: dict[str, LoadedTask], local_sandbox: Sandbox
) -> None:
    assert isinstance(local_sandbox, WarmStart)
    task = tasks["double"]
    texts = [
        task.original_source().decode(),
        task.stubbed_source().decode(),
        WRONG,
        "function double(a) {",
    ]
    warm = _graded_both(task, texts, local_sandbox)
    assert [v.reward for v in warm][:2] == [1.0, 0.0]
    assert warm[2].reason.endswith("hidden inputs differ") and warm[2].counterexample
    assert warm[3].reward == 0.0 and warm[3].reason.startswith("candidate ")


def test_a_typescript_target_through_a_warm_jail(
    tasks: dict[str, LoadedTask], local_sandbox: Sandbox
) -> None:
    task = tasks["triple"]
    assert task.hidden.target.path == "twice.ts"  # the runner preloads the loader for it
    texts = [task.original_source().decode(), task.stubbed_source().decode()]
    assert [v.reward for v in _graded_both(task, texts, local_sandbox)] == [1.0, 0.0]


def _dead_slots(pool: WarmPool) -> None:
    """Every slot `pool` hands out is killed first (a jail that died while it waited)."""
    take = pool.take

    def take_dead(key: Hashable, request_for: RequestFor) -> WarmJail:
        slot = take(key, request_for)
        slot.started.kill()
        return slot

    pool.take = take_dead  # type: ignore[method-assign]


def test_a_dead_warm_jail_or_a_failed_start_falls_back_to_a_cold_run(
    tasks: dict[str, LoadedTask], local_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tasks["double"]
    reference = task.original_source()
    target, calls, held = graded._plan(task, None)
    tree = task.repo.tree
    with WarmPool(local_sandbox, per_key=1) as pool:  # type: ignore[arg-type]
        _dead_slots(pool)
        # positive control: the dead jail's own run gives no outcome (it never read its job)
        slot = pool.take(*node_warm.warm_job(tree, target, calls, held))
        found = node_warm._finish(slot, reference, held.timeout_s, len(calls))
        assert found is None or not found.started
        if found is not None:
            assert {o.status for o in found.outcomes} == {node.Status.RUNNER_ERROR}
        run = node_warm.run_node_warm(local_sandbox, pool, tree, target, calls, reference, held)
        assert run.started and all(o.status is node.Status.RETURNED for o in run.outcomes)
        assert graded.score_script(task, run.outcomes).reward == 1.0
    with WarmPool(local_sandbox, per_key=1) as pool:  # type: ignore[arg-type]

        def failed(*args: object) -> object:
            raise InfraError("sandbox setup failed: no room")

        monkeypatch.setattr(pool, "take", failed)
        verdict = grade_text(task, reference.decode(), _jail(task, local_sandbox, pool))
    assert verdict.reward == 1.0


def test_a_candidate_that_replaces_a_global_cannot_reach_the_next(
    tasks: dict[str, LoadedTask], local_sandbox: Sandbox, tmp_path: Path
) -> None:
    task = tasks["pair"]
    splice = task.language().splice
    attack = splice(task.stubbed_source(), ATTACK, task.hidden.target)
    reference = task.original_source()
    # positive control: two candidates in one process, the attack first: the next one's `pair`
    # calls the forged `String`
    (tmp_path / "attack.js").write_bytes(attack)
    (tmp_path / "reference.js").write_bytes(reference)
    (tmp_path / "two_jobs.cjs").write_text(TWO_JOBS)
    files = [str(tmp_path / name) for name in ("two_jobs.cjs", "attack.js", "reference.js")]
    shared = subprocess.run(
        [str(node.node_binary()), *files], capture_output=True, text=True, timeout=60, check=True
    )
    assert json.loads(shared.stdout) == [[7, "7"], [7, "forged"]]
    # warm jails of one pool, for the same task, one after the other: each its own process
    with WarmPool(local_sandbox, per_key=1) as pool:  # type: ignore[arg-type]
        graded.prewarm_script(task, pool)
        first = graded.grade_script(task, attack.decode(), local_sandbox, pool)
        second = graded.grade_script(task, reference.decode(), local_sandbox, pool)
        assert pool.stats().taken == 2
    assert not isinstance(first, str) and first.reward == 1.0  # it ran, and answered right
    assert not isinstance(second, str) and second.reward == 1.0


# earns 1.0 only where writing its own file fails
WRITER = (
    "function double(a) { try { require('fs').appendFileSync(__filename, '// x');"
    " return -1; } catch (error) { return a * 2; } }"
)


def test_the_candidate_file_is_read_only_in_a_warm_jail(
    tasks: dict[str, LoadedTask], local_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tasks["double"]
    original = (task.repo.tree / task.hidden.target.path).read_bytes()

    def grade() -> float | None:
        with WarmPool(local_sandbox, per_key=1) as pool:  # type: ignore[arg-type]
            score = graded.grade_script(task, WRITER, local_sandbox, pool)
            assert pool.stats().taken == 1
        assert not isinstance(score, str)
        return score.reward

    # positive control: the slot's file bound writable, the candidate's write lands
    real = node_warm.warm_job

    def writable_job(*args: object) -> object:
        key, request_for = real(*args)  # type: ignore[arg-type]

        def writable(candidate: Path) -> object:
            request = request_for(candidate)
            mounts = tuple(
                dataclasses.replace(m, writable=m.source == str(candidate)) for m in request.mounts
            )
            return dataclasses.replace(request, mounts=mounts)

        return key, writable

    with monkeypatch.context() as patched:
        patched.setattr(node_warm, "warm_job", writable_job)
        assert grade() == 0.0
    assert grade() == 1.0
    assert (task.repo.tree / task.hidden.target.path).read_bytes() == original


def test_run_grades_javascript_candidates_in_warm_jails_started_while_the_agent_works(
    tasks: dict[str, LoadedTask], batch_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`replicate run`: the same verdicts warm and cold; warm, each task's jail was started
    (`prewarm_script`) before its candidate was graded, and taken by it."""
    answers = tmp_path / "answers"
    answers.mkdir()
    double, triple = tasks["double"], tasks["triple"]
    (answers / double.spec.source.symbol).write_bytes(double.original_source())  # triple: stub
    script = (
        'f="$ANSWERS/$REPLICATE_TARGET"; if [ -f "$f" ]; then cp "$f" "$REPLICATE_TARGET_FILE"; fi'
    )
    agent = AgentConfig(
        f"ANSWERS={answers} && {script}", get_sandbox("local"), timeout_s=60, mounts=(str(answers),)
    )
    taken: list[WarmStats] = []
    take = WarmPool.take

    def counting_take(self: WarmPool, key: Hashable, request_for: RequestFor) -> WarmJail:
        slot = take(self, key, request_for)
        taken.append(self.stats())
        return slot

    monkeypatch.setattr(WarmPool, "take", counting_take)

    def rows(warm: bool) -> list[tuple[object, ...]]:
        options = RunOptions(
            tasks=batch_dir,
            out=tmp_path / str(warm),
            agent=agent,
            sandbox_name="local",
            task_ids=(double.id, triple.id),
            warm=warm,
        )
        found = run_batch(options).rows
        return [(r.task_id, r.reward, r.status, r.reason) for r in found]

    cold = rows(False)
    assert taken == [] and [r[1] for r in cold] == [1.0, 0.0]
    assert rows(True) == cold
    # one pool for the repository: each run took a jail started before it was asked for (the
    # reference's two runs, then the stub's one)
    assert taken == [WarmStats(taken=n, ready=n) for n in (1, 2, 3)]
