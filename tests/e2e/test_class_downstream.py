"""A class task (task kind `class`) and a module task (`module`) taken by everything downstream
of gen, on the session's `boltons` batch (`test_class_tasks.py`, `test_module_tasks.py`; nothing
minted here): every export format's workspace hides every member's body; `grade`, verl's and
TRL's reward functions and `serve` (/grade, /get_reward) grade a completion holding the whole
class (file) at 1.0 and the stub at 0.0; the built-in single-completion agent's answer, the class
(file) in a fenced block among prose, is spliced whole and earns 1.0; the report's page of the
task shows its size, and a class whose fault only a later state reaches shows the failing call
sequence there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.class_kill_rates import uncovered_mutants
from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import TaskKind
from replicate.grading import grade_text, original_source, stubbed_source
from replicate.integrations.trl import reward_func
from replicate.integrations.verl import compute_score
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.languages.python_splice import STUB_BODY
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import Minted, replicate
from tests.e2e.test_degenerate import read_rows
from tests.integration.agents.fake_chat import Answer, serve, text
from tests.integration.integrations.server import serving


@pytest.fixture(scope="module", params=[TaskKind.CLASS, TaskKind.MODULE], ids=str)
def task(boltons: Minted, request: pytest.FixtureRequest) -> LoadedTask:
    """The batch's class (module) task with the fewest hidden inputs (the quickest to grade)."""
    batch = Batch.open(boltons.batch)
    ids = [i for i in batch.ids if batch.spec(i).task_kind is request.param]
    assert ids, f"the boltons batch holds no {request.param} task"
    return min((batch.load(i) for i in ids), key=lambda t: len(t.inputs))


def whole_class(task: LoadedTask) -> str:
    """The reference class (a module task's whole file), as a model would write it whole."""
    if task.spec.task_kind is TaskKind.MODULE:
        return original_source(task).decode("utf-8")
    span = task.hidden.target.def_span
    return original_source(task)[span.start_byte : span.end_byte].decode("utf-8")


def answer(task: LoadedTask) -> str:
    """A single completion: a sentence, the whole class in a fenced block, a sentence."""
    name = task.hidden.target.name
    return f"Here is `{name}` with every method.\n\n```python\n{whole_class(task)}\n```\n\nDone."


def lists_every_member(task: LoadedTask, prompt: str) -> bool:
    """Whether `prompt` names each member the task hides (a class task's TASK.md by name, a
    module task's by its signature)."""
    members = task.hidden.target.members
    return all(f"`{m.name}`" in prompt or f"def {m.name}(" in prompt for m in members)


def hides_every_member(task: LoadedTask, shown: str) -> None:
    """`shown`, a workspace's target file, is the stub: each member's body replaced, none left."""
    members = task.hidden.target.members
    assert shown == stubbed_source(task).decode("utf-8")
    original = original_source(task)
    stubs = STUB_BODY.decode()
    assert shown.count(stubs) == original.decode().count(stubs) + len(members)
    bodies = [original[m.body_span.start_byte : m.body_span.end_byte].decode() for m in members]
    assert not [b for b in bodies if len(b) > 40 and b in shown]


def test_every_export_format_hides_every_member_body(
    boltons: Minted, task: LoadedTask, tmp_path: Path
) -> None:
    path = task.hidden.target.path
    base = ("--tasks", str(boltons.batch), "--task", task.id, "--context", "file")
    for fmt in ("rows", "inspect", "harbor"):
        done = replicate("export", *base, "--format", fmt, "--out", str(tmp_path / fmt))
        assert done.returncode == 0, done.stderr[-2000:]
    (row,) = [json.loads(line) for line in (tmp_path / "rows.jsonl").open()]
    prompt = row["prompt"][0]["content"]
    assert row["reward_model"]["ground_truth"] == task.id
    assert lists_every_member(task, prompt)
    assert stubbed_source(task).decode("utf-8").strip() in prompt  # --context file: the stub
    assert task.id not in row["visible_task_ids"]
    hides_every_member(task, (tmp_path / "inspect" / "workspaces" / task.id / path).read_text())
    harbor = tmp_path / "harbor" / task.id
    (shown,) = [p for p in (harbor / "environment").rglob(Path(path).name) if p.is_file()]
    hides_every_member(task, shown.read_text())


def test_grade_reward_functions_and_serve_take_the_whole_class(
    boltons: Minted, task: LoadedTask, tmp_path: Path
) -> None:
    right, stub = answer(task), stubbed_source(task).decode("utf-8")
    graded = []
    for name, candidate in (("right", right), ("stub", stub)):
        (tmp_path / name).write_text(candidate)
        done = replicate(
            "grade", "--tasks", str(boltons.batch), "--task", task.id,
            "--candidate", str(tmp_path / name), timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        graded.append(json.loads(done.stdout)["reward"])
    assert graded == [1.0, 0.0]
    info = {"tasks_dir": str(boltons.batch)}
    verl = [compute_score("replicate", c, task.id, info)["score"] for c in (right, stub)]
    assert verl == [1.0, 0.0]
    completions = [[{"role": "assistant", "content": c}] for c in (right, stub)]
    trl = reward_func(["p", "p"], completions, [task.id] * 2, extra_info=[info] * 2)
    assert trl == [1.0, 0.0]
    with serving(boltons.batch, "--workers", "1") as server:
        got = httpx.post(
            f"{server.url}/grade", json={"task_id": task.id, "candidate": right}, timeout=600
        ).json()
        body = {"query": ["p\n" + right, "p\n" + stub], "prompts": ["p\n"] * 2}
        rewards = httpx.post(
            f"{server.url}/get_reward", json={**body, "labels": [task.id] * 2}, timeout=600
        ).json()
    assert (got["status"], got["reward"]) == ("graded", 1.0)
    assert rewards["rewards"] == [1.0, 0.0]


def test_the_builtin_agent_answers_the_whole_class_and_the_report_shows_it(
    boltons: Minted, task: LoadedTask, tmp_path: Path
) -> None:
    asked: list[str] = []

    def script(request: dict[str, Any]) -> Answer:
        asked.append(request["messages"][-1]["content"])
        return text(answer(task))

    out = tmp_path / "run"
    with serve(script) as chat:
        kind = str(task.spec.task_kind)
        args = ("--tasks", str(boltons.batch), "--out", str(out), "--kinds", kind)
        args += ("--task", task.id, "--agent", "builtin:openai-single", "--model", "fake")
        args += ("--base-url", chat.url, "--allow-host", "127.0.0.1", "--workers", "1", "--json")
        done = replicate("run", *args, timeout=900, env={"OPENAI_API_KEY": "sk-test"})
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(done.stdout)["rows"]
    assert (row["task_id"], row["status"], row["reward"]) == (task.id, "graded", 1.0)
    (prompt,) = asked
    assert lists_every_member(task, prompt)
    page = tmp_path / "report.html"
    made = replicate("report", str(out), "--out", str(page))
    assert made.returncode == 0, made.stderr[-2000:]
    html = page.read_text()
    members = len(task.hidden.target.members)
    assert task.id in html and f"{kind} task" in html and f"in {members} members" in html


def _sequence_failure(batch: Batch, jail_for: Any) -> tuple[str, str]:
    """A class task and a mutant of it that every member's input passes and a call sequence
    fails: gen's first mutant of each member no method task covers that the sequences call
    (`bench/class_kill_rates.py`), tried until one's counterexample is a call sequence."""
    specs = {i: batch.spec(i) for i in batch.ids}
    for ident in (i for i, spec in specs.items() if spec.task_kind is TaskKind.CLASS):
        task = batch.load(ident)
        prefix = f"{task.hidden.target.symbol}."
        methods = [
            batch.load(i)
            for i, spec in specs.items()
            if spec.task_kind is TaskKind.METHOD and spec.source.symbol.startswith(prefix)
        ]
        for mutant in uncovered_mutants(task, methods, 1):
            verdict = grade_text(task, mutant, jail_for(task), shrink=False)
            example = verdict.counterexample
            if example is not None and example.detail.startswith("call sequence:"):
                return ident, mutant
    raise AssertionError("no uncovered mutant of a class task fails only a call sequence")


def test_a_later_state_s_fault_is_shown_as_a_call_sequence_on_the_report(
    boltons: Minted, tmp_path: Path
) -> None:
    """A mutant only a call sequence tells apart (every member's input matches): `run` records
    the shortest failing prefix of the sequence, shrunk, as its counterexample and the report's
    page of the task shows it."""
    batch = Batch.open(boltons.batch)
    ident, source = _sequence_failure(
        batch, lambda task: Jail(context_for(task.repo, cache_root()), get_sandbox("local"))
    )
    mutant = tmp_path / "mutants"
    mutant.mkdir()
    (mutant / f"{ident}.py").write_text(source)
    out = tmp_path / "run"
    agent = f'cp {mutant}/"$REPLICATE_TASK_ID".py "$REPLICATE_TARGET_FILE"'
    done = replicate(
        "run", "--tasks", str(boltons.batch), "--task", ident, "--agent", agent,
        "--out", str(out), "--mount", str(mutant), "--workers", "1", timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = read_rows(out)
    assert row.status == "graded" and row.verdict is not None, row.reason
    assert row.reward is not None and row.reward < 1.0, row.reason
    example = row.verdict.counterexample
    assert example is not None and example.detail.startswith("call sequence:"), example
    qualname = batch.load(ident).hidden.target.qualname
    assert example.call.startswith(f"x = {qualname}("), example.call
    first, steps = (int(word) for word in example.detail.split()[4:7:2])  # "its first F of S"
    assert 1 <= first <= steps
    page = tmp_path / "report.html"
    made = replicate("report", str(out), "--out", str(page))
    assert made.returncode == 0, made.stderr[-2000:]
    html = page.read_text()
    assert "call sequence: its first" in html and f"x = {qualname}(" in html
