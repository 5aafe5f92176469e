"""Every JSON Lines file the project writes reads back as written, whatever text it holds.

Each case writes one record holding a string through the project's real writer and reads it back
through its real reader: a batch's inputs and expected outcomes, results.jsonl (as `run` resumes
it and as the report reads it), a built-in agent's transcript, funnel.jsonl, repos.jsonl and the
exported rows.  The strings are arbitrary Unicode, lone surrogates included (JSON holds them as
escapes), with the characters `str.splitlines` breaks at drawn often.  The positive control
brings back the `splitlines` reading and shows it losing or garbling the line for each
character a writer leaves raw (U+0085, U+2028, U+2029; JSON escapes those below U+0020).
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replicate import GRADER_VERSION, jsonl
from replicate.agents import AgentOutcome
from replicate.batch import Batch, LoadedTask, read_task_files, write_task
from replicate.core.records import LedgerEntry, ResultRow, Verdict
from replicate.exporters.rows import write_jsonl
from replicate.gen.ledger import Ledger, LedgerKey, read_entries
from replicate.gen.many.ledger import RepoOutcome, append_ledger, read_ledger
from replicate.scoring.batch_run import _save_transcript
from replicate.scoring.results import (
    ResultLog,
    RunIdentity,
    claim_run_dir,
    load_rows,
    repair_results,
)
from replicate.scoring.rundata import load_run, transcript

BUNDLED = Path(__file__).resolve().parents[2]  # the batch minted from corpus/samplelib
SPLIT_AT = ("\x85", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\r", "\n")
SURROGATES = ("\ud800", "\udbff", "\udc00", "\udfff")
RAW = ("\x85", "\u2028", "\u2029")  # what a writer may leave raw: the control's characters


def _paired(text: str) -> str:
    """A high surrogate followed by a low one is one character to JSON (its escape is the pair's
    escape): the pair made that character, as every JSON reader reads it."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


TEXTS = st.text(
    st.one_of(st.sampled_from(SPLIT_AT + SURROGATES), st.characters(exclude_categories=())),
    max_size=30,
).map(_paired)
KEY = LedgerKey("repo", "c0ffee", GRADER_VERSION, 0.5)


@functools.cache
def _task() -> LoadedTask:
    batch = Batch.open(BUNDLED, verify=False)
    return batch.load(next(i for i in batch.ids if "__class." not in i))  # a function task


def _batch(folder: Path, text: str) -> str:
    """A task's inputs.jsonl (the call's rendering) and expected.jsonl (an outcome's value)."""
    task = _task()
    first, *rest = task.inputs
    inputs = (first.model_copy(update={"call": text}), *rest)
    expected = {**task.expected, first.index: {**task.expected[first.index], "text": text}}
    write_task(folder, task.spec, task.hidden, task.prompt, inputs, expected)
    files = read_task_files(folder, task.id)
    assert files.expected[first.index]["text"] == text
    return files.inputs[0].call


def _row(text: str) -> ResultRow:
    verdict = Verdict(
        task_id="t", reward=0.5, status="graded", reason=text, grader_version=GRADER_VERSION
    )
    return ResultRow(
        task_id="t", reward=0.5, status="graded", reason=text, agent_status="ok",
        agent_exit_code=0, duration_s=1.0, verdict=verdict,
    )  # fmt: skip


def _results(folder: Path, text: str) -> str:
    """results.jsonl as `run` appends it, resumes it (repair, load) and the report reads it."""
    claim_run_dir(
        folder, RunIdentity(tasks=str(folder / "gone"), agent="a", sandbox="plain", samples=1)
    )
    ResultLog(folder).append([_row(text)])
    assert repair_results(folder) == 0
    assert load_rows(folder)[("t", 0)].reason == text
    (row,) = load_run(folder).rows
    return row.verdict.reason


def _transcript(folder: Path, text: str) -> str:
    """A built-in agent's transcript (a JSON document beside the rows)."""
    claim_run_dir(
        folder, RunIdentity(tasks=str(folder / "gone"), agent="a", sandbox="plain", samples=1)
    )
    ResultLog(folder).append([_row("")])
    messages = {"messages": [{"role": "assistant", "content": text}]}
    _save_transcript(folder, ("t", 0), AgentOutcome("ok", 0, 0.0, "", transcript=messages))
    shown = transcript(load_run(folder), "t", 0)
    assert shown is not None
    return str(json.loads(shown)["messages"][0]["content"])


def _funnel(folder: Path, text: str) -> str:
    ledger = Ledger(folder, KEY)
    ledger.append(ledger.entry("m.f", "traced", reason=text, detail=text))
    (entry,) = read_entries(folder)
    assert isinstance(entry, LedgerEntry) and entry.reason == text
    return entry.detail


def _repos(folder: Path, text: str) -> str:
    append_ledger(folder, [RepoOutcome(source="s", status="failed", reason=text)])
    return str(read_ledger(folder)["s"].reason)


def _rows(folder: Path, text: str) -> str:
    """The exported rows' JSONL, read as a JSON Lines reader (a trainer's) reads it."""
    write_jsonl([{"prompt": [{"role": "user", "content": text}]}], folder / "rows.jsonl")
    (row,) = [json.loads(line) for line in jsonl.split((folder / "rows.jsonl").read_text())]
    return str(row["prompt"][0]["content"])


Case = Callable[[Path, str], str]
CASES: dict[str, Case] = {
    "inputs+expected": _batch,
    "results": _results,
    "transcript": _transcript,
    "funnel": _funnel,
    "repos": _repos,
    "rows": _rows,
}
LINE_SPLIT = ("inputs+expected", "results", "funnel", "repos", "rows")  # JSONL read by lines


def _read_back(case: Case, text: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        return case(Path(folder), text)


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=40, deadline=None)
@given(text=TEXTS)
def test_every_jsonl_file_reads_back_what_was_written(name: str, text: str) -> None:
    assert _read_back(CASES[name], text) == text


@pytest.mark.parametrize("raw", RAW, ids=["U+0085", "U+2028", "U+2029"])
@pytest.mark.parametrize("name", LINE_SPLIT)
def test_the_old_splitlines_reading_loses_the_line(
    name: str, raw: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = f"before{raw}after"
    assert _read_back(CASES[name], text) == text
    monkeypatch.setattr(jsonl, "split", str.splitlines)  # the control: the reading of before
    try:
        found: str | None = _read_back(CASES[name], text)
    except Exception:  # noqa: BLE001 - a broken line, a missing record: the line is lost
        found = None
    assert found != text


@pytest.mark.parametrize("value", ["\x85", "\u2028", "a\x1c\x0b\x0cb", "\ud800", "x\udfff\n"])
def test_a_line_holds_no_newline_and_splits_back(value: str) -> None:
    written = jsonl.dumps({"v": value}, ensure_ascii=False) + jsonl.dumps([value])
    assert written.count("\n") == 2
    first, second = jsonl.split(written)
    assert json.loads(first) == {"v": value} and json.loads(second) == [value]
    assert jsonl.split("a\r\nb\n\nc") == ["a", "b", "", "c"]
    with pytest.raises(ValueError):
        jsonl.line('{"a":\n1}')
