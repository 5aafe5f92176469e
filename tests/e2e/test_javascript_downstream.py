"""TypeScript tasks taken by everything downstream of gen that a Python task is, on the session's
corpus/tslib batch (`tslib`, minted once offline and shared with `test_typescript.py`; nothing
minted here): `serve` (/grade, /get_reward) grades every task's reference 1.0 and its stub 0.0; the
built-in agents, against a scripted local chat server, earn 1.0 answering the reference
(`builtin:openai-single` in a fenced `typescript` block among prose, `builtin:openai` through its
write tool, after its `run_node` and `run_tests` tools showed it Node's real output: the stub's
"not implemented" from a test file and a snippet, Node's own ReferenceError for a wrong snippet,
then the body's result and a passing test file) and a wrong answer earns less than 1, and the
report lists the run's tasks and shows that answer's counterexample in JavaScript's terms
(`undefined`, a thrown `RangeError`); every export format (rows, inspect, harbor) hides each task's
original body from that task's model, any other task's body it shows is listed in its
`visible_task_ids`, and each format's consumer reads it back: the rows by `datasets` and TRL's
reward function, the inspect task by inspect_ai's own `eval` (the original 1.0, the stub 0.0), the
Harbor folders by Harbor's own task model and linter (graded by Harbor's runner in
test_harbor_run_script.py)."""

from __future__ import annotations

import html
import json
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from replicate import confined
from replicate.batch.store import Batch, LoadedTask
from replicate.exporters.plan import body_text
from replicate.integrations.grading import close_graders
from replicate.integrations.trl import reward_func
from tests.e2e.conftest import Minted, replicate
from tests.e2e.test_degenerate import read_rows
from tests.harbor_venv import compose_missing, harbor_python
from tests.integration.agents.fake_chat import Answer, serve, step, text, tool_results, tools
from tests.integration.integrations.server import serving
from tests.integration.integrations.test_export_harbor import CHECK
from tests.integration.integrations.test_export_inspect import run_eval

BUMP = "src/version.bumpVersion"  # a function: answered as its bare definition
HIT_RATE = "src/cache.BoundedCache.get"  # a method: answered as the whole file
FORMAT = "src/duration.formatDuration"  # answered wrong: `undefined` where it throws
FILE_TOOLS = ["list_files", "read_file", "write_file", "edit_file"]
THROW = "throw new RangeError(`not a finite duration: ${ms}`);"
WRONG_THROW = "return undefined as unknown as string;"


@pytest.fixture(scope="module")
def batch(tslib: Minted) -> Batch:
    return Batch.open(tslib.batch)


def task_of(batch: Batch, symbol: str) -> LoadedTask:
    return batch.load(batch.resolve(symbol))


def definition(task: LoadedTask) -> str:
    span = task.hidden.target.def_span
    return task.original_source()[span.start_byte : span.end_byte].decode("utf-8")


def wrong_format(task: LoadedTask) -> str:
    """formatDuration as written, but answering `undefined` where the original throws."""
    right = definition(task)
    assert THROW in right
    return right.replace(THROW, WRONG_THROW)


def answer(batch: Batch, prompt: str) -> str:
    """The single completion for the task `prompt` asks for: prose and a fenced block."""
    symbol = prompt.split("`")[1]  # "# Implement `SYMBOL`"
    task = task_of(batch, symbol)
    if symbol == FORMAT:
        code = wrong_format(task)
    else:
        code = definition(task) if symbol == BUMP else task.original_source().decode("utf-8")
    return f"Here is `{task.hidden.target.name}`.\n\n```typescript\n{code}\n```\n\nDone."


def test_serve_grades_every_reference_1_and_every_stub_0(tslib: Minted, batch: Batch) -> None:
    tasks = [batch.load(ident) for ident in batch.ids]
    queries, labels = [], []
    for task in tasks:
        queries += ["p\n" + task.original_source().decode(), "p\n" + task.stubbed_source().decode()]
        labels += [task.id, task.id]
    bump = task_of(batch, BUMP)
    fenced = f"Here:\n```typescript\n{definition(bump)}\n```\n"
    with serving(tslib.batch, "--workers", "1") as server:
        got = httpx.post(
            f"{server.url}/grade", json={"task_id": bump.id, "candidate": fenced}, timeout=600
        ).json()
        body = {"query": queries, "prompts": ["p\n"] * len(queries), "labels": labels}
        rewards = httpx.post(f"{server.url}/get_reward", json=body, timeout=600).json()
    assert (got["status"], got["reward"]) == ("graded", 1.0), got
    assert rewards["rewards"] == [1.0, 0.0] * len(tasks)
    assert rewards["extra_logs"]["infra_error"] == [0.0] * len(queries)


def _run(batch: Batch, out: Path, agent: str, url: str, *symbols: str) -> None:
    picks = [arg for symbol in symbols for arg in ("--task", batch.resolve(symbol))]
    args = ("--tasks", str(batch.root), "--out", str(out), *picks, "--agent", agent)
    args += ("--model", "fake", "--base-url", url, "--allow-host", "127.0.0.1", "--workers", "1")
    done = replicate("run", *args, timeout=900, env={"OPENAI_API_KEY": "sk-test"})
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_single_completion_agent_and_the_report_speak_javascript(
    batch: Batch, tmp_path: Path
) -> None:
    asked: list[list[dict[str, Any]]] = []

    def script(request: dict[str, Any]) -> Answer:
        asked.append(request["messages"])
        return text(answer(batch, request["messages"][-1]["content"]))

    out = tmp_path / "run"
    with serve(script) as chat:
        _run(batch, out, "builtin:openai-single", chat.url, BUMP, HIT_RATE, FORMAT)
    for system, user in asked:
        assert "TypeScript function" in system["content"] and "python" not in system["content"]
        assert "```typescript\n" in user["content"] and "python" not in user["content"].lower()
    rows = {row.task_id: row for row in read_rows(out)}
    assert len(rows) == len(asked) == 3
    for symbol in (BUMP, HIT_RATE):
        row = rows[batch.resolve(symbol)]
        assert (row.status, row.reward) == ("graded", 1.0), row.reason
    wrong = rows[batch.resolve(FORMAT)]
    assert wrong.status == "graded" and wrong.reward is not None and 0 < wrong.reward < 1
    assert wrong.verdict is not None and wrong.verdict.counterexample is not None
    example = wrong.verdict.counterexample
    print(f"counterexample: {example.call} -> expected {example.expected}, got {example.got}")
    assert example.call.startswith("formatDuration(") and example.got == "undefined"
    assert example.expected.startswith("throws RangeError: not a finite duration: ")
    page = tmp_path / "report.html"
    made = replicate("report", str(out), "--out", str(page))
    assert made.returncode == 0, made.stderr[-2000:]
    assert "report on 3 task(s)" in made.stderr
    shown = html.unescape(page.read_text())
    assert all(ident in shown for ident in rows)
    assert all(f"<h3>{symbol}</h3>" in shown for symbol in (BUMP, HIT_RATE, FORMAT))
    block = shown[shown.index("<b>Counterexample</b>") :].split("</pre>")[0]
    assert f"call:     {example.call}" in block and "got:      undefined" in block
    assert "expected: throws RangeError: not a finite duration" in block
    assert "None" not in block and "Traceback" not in block


BUMP_TESTS = "test/version.test.js"  # imports ../src/version.ts: through the loader
SNIPPET = "console.log(require('./src/version.ts').bumpVersion('1.2.3', 'patch'))"


def test_the_tool_agent_runs_node_and_the_tests_then_earns_1(batch: Batch, tmp_path: Path) -> None:
    task = task_of(batch, BUMP)
    write = {"path": task.hidden.target.path, "content": task.original_source().decode()}
    node = ("run_node", {"code": SNIPPET, "file": ""})
    tests = ("run_tests", {"files": BUMP_TESTS})
    wrong = ("run_node", {"code": "console.log(notDefinedHere)", "file": ""})
    steps = [(tests, node, wrong), (("write_file", write),), (node, tests)]
    offered: list[list[str]] = []
    systems: list[str] = []
    results: list[str] = []

    def script(request: dict[str, Any]) -> Answer:
        offered.append([t["function"]["name"] for t in request["tools"]])
        systems.append(request["messages"][0]["content"])
        n = step(request)
        results[:] = tool_results(request)
        return tools(*steps[n]) if n < len(steps) else text("Done.")

    out = tmp_path / "run"
    with serve(script) as chat:
        _run(batch, out, "builtin:openai", chat.url, BUMP)
    (row,) = read_rows(out)
    assert (row.task_id, row.status, row.reward) == (task.id, "graded", 1.0), row.reason
    assert offered[0] == [*FILE_TOOLS, "run_node", "run_tests"], offered[0]
    assert "TypeScript with Node" in systems[0] and "Python" not in systems[0]
    stub_tests, stub_node, control, wrote, right_node, right_tests = results
    print("\n---\n".join(results))
    assert stub_tests.startswith("0 of 1 test files passed\n=== test/version.test.js: exit")
    assert "not implemented" in stub_tests and "# fail 1" in stub_tests
    assert stub_node.startswith("exit code 1\n") and "Error: not implemented" in stub_node
    assert "ReferenceError: notDefinedHere is not defined" in control  # Node's own words
    assert wrote.startswith("wrote ")
    assert right_node.startswith("exit code 0\n--- stdout\n1.2.4\n"), right_node
    assert right_tests.startswith("1 of 1 test files passed\n"), right_tests
    assert "# fail 0" in right_tests and "not implemented" not in right_tests


def _view(folder: Path) -> str:
    """Every regular file under `folder`, as text, one after another."""
    return "\n".join(
        confined.read_bytes(folder, rel).decode("utf-8", "replace")
        for rel in confined.regular_files(folder)
    )


def hides_its_body(
    task: LoadedTask, shown: str, visible: list[str], bodies: dict[str, str]
) -> None:
    """`shown` (what the task's model sees) holds the task's stub, not its body; any other
    task's body it holds is listed in `visible`."""
    assert body_text(task) not in shown, task.id
    assert 'throw new Error("not implemented")' in shown, task.id
    seen = {ident for ident, body in bodies.items() if ident != task.id and body in shown}
    assert seen <= set(visible), (task.id, seen - set(visible))


def _export(tslib: Minted, out: Path, fmt: str, *more: str) -> str:
    """What the export said on stderr."""
    argv = ("export", "--tasks", str(tslib.batch), "--format", fmt, "--out", str(out), *more)
    done = replicate(*argv)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stderr


def test_rows_hide_every_body_and_trl_grades_them(
    tslib: Minted, batch: Batch, tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    _export(tslib, tmp_path / "rows", "rows")
    data = datasets.load_dataset("parquet", data_files=str(tmp_path / "rows.parquet"))["train"]
    rows = list(data)
    bodies = {ident: body_text(batch.load(ident)) for ident in batch.ids}
    assert sorted(row["task_id"] for row in rows) == sorted(batch.ids)
    for row in rows:
        prompt = row["prompt"][-1]["content"]
        hides_its_body(batch.load(row["task_id"]), prompt, [], bodies)  # signatures: none shown
        assert "```typescript" in prompt and not row["visible_task_ids"]
    completions, ids, infos = [], [], []
    for row in rows:
        task = batch.load(row["task_id"])
        for code in (task.original_source(), task.stubbed_source()):
            completions.append([{"role": "assistant", "content": code.decode()}])
            ids.append(row["task_id"])
            infos.append(row["extra_info"])
    try:
        rewards = reward_func(["p"] * len(ids), completions, ids, extra_info=infos)
    finally:
        close_graders()
    assert rewards == [1.0, 0.0] * len(rows)


def test_rows_of_the_class_context_show_the_class_and_hide_each_body(
    tslib: Minted, batch: Batch, tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    _export(tslib, tmp_path / "rows", "rows", "--context", "class")
    data = datasets.load_dataset("parquet", data_files=str(tmp_path / "rows.parquet"))["train"]
    bodies = {ident: body_text(batch.load(ident)) for ident in batch.ids}
    left_out = 0
    for row in data:
        task = batch.load(row["task_id"])
        prompt = row["prompt"][-1]["content"]
        hides_its_body(task, prompt, row["visible_task_ids"], bodies)
        owner = task.hidden.target.class_name
        if owner:
            assert f"class {owner}" in prompt, task.id  # a method is shown in its class
        left_out += "of this file not shown)" in prompt
    assert left_out, "no prompt left another definition out: the outline did nothing"


def test_inspect_hides_each_body_and_inspect_ai_grades_it(
    tslib: Minted, batch: Batch, tmp_path: Path
) -> None:
    pytest.importorskip("inspect_ai")
    out = tmp_path / "inspect"
    _export(tslib, out, "inspect")
    samples = json.loads((out / "samples.json").read_text())["samples"]
    bodies = {ident: body_text(batch.load(ident)) for ident in batch.ids}
    assert sorted(s["task_id"] for s in samples) == sorted(batch.ids)
    for sample in samples:
        task = batch.load(sample["task_id"])
        shown = sample["instruction"] + _view(out / sample["workspace"])
        hides_its_body(task, shown, sample["metadata"]["visible_task_ids"], bodies)
    originals = {
        ident: (batch.load(ident).hidden.target.path, batch.load(ident).original_source().decode())
        for ident in batch.ids
    }
    try:
        assert run_eval(out, originals, tmp_path / "right") == dict.fromkeys(batch.ids, 1.0)
        assert run_eval(out, {}, tmp_path / "stub") == dict.fromkeys(batch.ids, 0.0)
    finally:
        close_graders()


def test_harbor_hides_each_body_and_harbor_reads_it_back(
    tslib: Minted, batch: Batch, tmp_path: Path
) -> None:
    out = tmp_path / "harbor"
    said = _export(tslib, out, "harbor")
    assert "JavaScript/TypeScript" not in said  # the verifier image has Node: no warning
    assert (out / "_images" / "replicate-verifier" / "node" / "node").is_file()
    bodies = {ident: body_text(batch.load(ident)) for ident in batch.ids}
    for ident in batch.ids:
        task, folder = batch.load(ident), out / ident
        config = tomllib.loads((folder / "task.toml").read_text())
        shown = (folder / "instruction.md").read_text() + _view(folder / "environment")
        hides_its_body(task, shown, config["metadata"]["visible_task_ids"], bodies)
        assert "typescript" in config["task"]["keywords"]
        oracle = folder / "solution" / "original.ts"  # what solve.sh puts back
        assert oracle.read_bytes() == task.original_source()
        assert (
            f"cp /solution/original.ts /app/{task.hidden.target.path}"
            in (folder / "solution" / "solve.sh").read_text()
        )
    python = harbor_python()
    if python is None:
        pytest.skip("no Harbor venv (Python 3.12): run scripts/install.sh --dev")
    missing = compose_missing()  # Harbor's linter reads the tasks' compose files with it
    if missing is not None:
        pytest.skip(missing)
    folders = [str(out / ident) for ident in batch.ids]
    done = subprocess.run(
        [str(python), str(CHECK), *folders], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    views = {Path(v["dir"]).name: v for v in map(json.loads, done.stdout.splitlines())}
    for ident in batch.ids:
        task, view = batch.load(ident), views[ident]
        assert {finding["rule"] for finding in view["lint"]} <= {"unpinned-image"}, view["lint"]
        assert view["name"] == f"replicate/{ident}"
        assert task.prompt.strip() in view["instruction"]
        assert view["artifacts"] == [f"/app/{task.hidden.target.path}"]
        assert view["metadata"]["symbol"] == task.spec.source.symbol
