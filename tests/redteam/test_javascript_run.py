"""The JavaScript red team through the real `replicate run`, on each isolating backend (`local`
and `docker`, `conftest.BACKENDS`): one run of the tiny repository's five tasks
(`javascript/minted.py`), its agent leaving a cheating file for each task (an impostor value, a
lookalike, a patched prototype), each first shown to fool the naive in-process grader (the
positive control, once per attack), then graded 0 in the run's own results, the run itself
ending well. The same attacks graded in-process are `test_javascript_cheats.py`'s."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from replicate.batch import LoadedTask
from tests.integration.minted import run_cli
from tests.redteam.conftest import Controls
from tests.redteam.javascript.minted import mint_tiny, naive_reward, tasks_by_name
from tests.redteam.test_javascript_cheats import ATTACKS

# one attack per task of the tiny repository: the run's agent dispatches on the target
BY_TARGET = {
    "double": "valueof-toprimitive-impostor",
    "pair": "array-lookalike",
    "when": "date-lookalike",
    "tally": "patch-map-prototype",
    "letters": "patch-set-prototype",
}
AGENT = 'f="$ANSWERS/$REPLICATE_TARGET"; if [ -f "$f" ]; then cp "$f" "$REPLICATE_TARGET_FILE"; fi'


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, LoadedTask]]:
    out = mint_tiny(tmp_path_factory.mktemp("javascript-run"))
    return out, tasks_by_name(out)


@pytest.fixture(scope="module")
def answers(
    minted: tuple[Path, dict[str, LoadedTask]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """Each attack spliced into its task's stubbed file, named by the task's target."""
    folder = tmp_path_factory.mktemp("javascript-answers")
    for name, attack in BY_TARGET.items():
        task = minted[1][name]
        assert ATTACKS[attack][0] == name
        whole = task.language().splice(
            task.stubbed_source(), ATTACKS[attack][1], task.hidden.target
        )
        (folder / task.spec.source.symbol).write_bytes(whole)
    folder.chmod(0o755)  # docker's sandbox user reads the mount
    return folder


def test_javascript_cheats_through_replicate_run(
    backend: str,
    minted: tuple[Path, dict[str, LoadedTask]],
    answers: Path,
    controls: Controls,
    tmp_path: Path,
) -> None:
    batch, tasks = minted
    for name, attack in BY_TARGET.items():  # the controls: the naive grader pays each
        paid = controls.once(f"js-run-{attack}", _naive(tasks[name], attack, tmp_path))
        assert paid >= 0.9, f"{attack}: the naive grader pays only {paid}: it tests nothing"
    out = tmp_path / "run"
    argv = ["run", "--tasks", str(batch), "--agent", f"ANSWERS={answers} && {AGENT}"]
    argv += ["--sandbox", backend, "--mount", str(answers), "--out", str(out), "--workers", "2"]
    done = run_cli(*argv, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_task = {row["task_id"]: row for row in rows}
    assert sorted(by_task) == sorted(task.id for task in tasks.values())
    for name, attack in BY_TARGET.items():
        row = by_task[tasks[name].id]
        assert row["reward"] == 0.0, f"{backend} {attack}: {row['reward']} ({row.get('reason')})"
        got = row["verdict"]["counterexample"]["got"]  # the attack's own value, not the stub's
        assert "not implemented" not in got, f"{backend} {attack}: the agent left the stub"


def _naive(task: LoadedTask, attack: str, scratch: Path) -> Callable[[], float]:
    return lambda: naive_reward(task, ATTACKS[attack][1], scratch / attack)
