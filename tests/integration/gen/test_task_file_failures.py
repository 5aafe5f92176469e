"""A task whose files cannot be written, or read back, is that task's drop; the gen goes on.

One library's whole gen once ended with `error: task <id>: broken .../inputs.jsonl at line 159`:
its inputs.jsonl was valid, but the reader of the day split lines with `str.splitlines`, which
breaks at U+0085.  These gens of the tiny repository bring that reader back for one task (and a
full disk for another): the positive control shows the whole gen failing as it did, the others
that gen drops just those targets, says why in `funnel.jsonl`, and mints the rest.
"""

from __future__ import annotations

import errno
import json
import types
from pathlib import Path
from typing import Any

import pytest

from replicate import jsonl
from replicate.batch import lines as batch_lines
from replicate.batch import store
from replicate.cli.main import main
from replicate.gen import publish
from tests.integration.minted import FILES, SYMBOLS, make_git_repo, run_cli

CLAMP, PARSE_INT = "tinypkg.core.clamp", "tinypkg.core.parse_int"


def _old_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """The batch loader split with `str.splitlines`, as it did."""
    old = types.SimpleNamespace(
        split=str.splitlines, parse_model=jsonl.parse_model, dumps=jsonl.dumps,
        model_line=jsonl.model_line,
    )  # fmt: skip
    monkeypatch.setattr(store, "jsonl", old)
    monkeypatch.setattr(batch_lines, "jsonl", old)  # the batch's records' lines are read there


def _inject(monkeypatch: pytest.MonkeyPatch, *, full_disk: bool) -> None:
    """clamp's inputs hold U+0085 (valid JSONL); parse_int's files meet a full disk."""
    real = publish.write_task

    def write_task(
        out: Path, spec: Any, hidden: Any, prompt: str, inputs: Any, ex: Any, seqs: Any = ()
    ) -> None:
        if spec.source.symbol == PARSE_INT and full_disk:
            raise OSError(errno.ENOSPC, "No space left on device")
        if spec.source.symbol == CLAMP:
            inputs = [item.model_copy(update={"call": item.call + "\x85"}) for item in inputs]
        real(out, spec, hidden, prompt, inputs, ex, seqs)

    monkeypatch.setattr(publish, "write_task", write_task)


def _gen(repo: Path, out: Path) -> int:
    return main(["gen", "--repo", str(repo), "--out", str(out), "--no-strength", "--workers", "2"])


def test_without_the_read_back_one_task_fails_the_whole_gen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    _old_reader(monkeypatch)
    _inject(monkeypatch, full_disk=False)
    monkeypatch.setattr(publish, "read_task_files", lambda root, task_id: None)
    assert _gen(repo, tmp_path / "batch") == 2
    assert "inputs.jsonl at line" in capsys.readouterr().err


def test_a_task_that_cannot_be_written_or_read_back_is_dropped_and_gen_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_git_repo(tmp_path / "repo", FILES)
    out = tmp_path / "batch"
    _old_reader(monkeypatch)
    _inject(monkeypatch, full_disk=True)
    assert _gen(repo, out) == 0
    lines = (out / "funnel.jsonl").read_text().splitlines()
    entries = {e["symbol"]: e for e in map(json.loads, lines)}
    assert entries[CLAMP]["kept"] is False
    assert entries[CLAMP]["reason"] == "task files could not be read back"
    assert "inputs.jsonl at line" in entries[CLAMP]["detail"]
    assert entries[PARSE_INT]["reason"] == "task files could not be written"
    assert "No space left on device" in entries[PARSE_INT]["detail"]
    minted = {s for s, e in entries.items() if e["kept"]}
    assert minted == set(SYMBOLS) - {CLAMP, PARSE_INT}
    assert sorted(p.name for p in (out / "specs").iterdir() if p.is_dir()) == sorted(
        entries[s]["task_id"] for s in minted
    )
    monkeypatch.undo()
    done = run_cli("validate", "--tasks", str(out))
    assert done.returncode == 0 and "2 of 2 tasks valid" in done.stderr, done.stderr
