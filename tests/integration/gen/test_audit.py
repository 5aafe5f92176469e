"""The leak audit gen runs on each task as it is minted: the visible files are read once."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.gen import audit
from tests.integration.minted import CORE_PATH, Tiny


def test_each_task_is_audited_against_files_read_once(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "vendored").mkdir()
    (tmp_path / "vendored" / "copy.py").write_bytes((tiny.repo / CORE_PATH).read_bytes())
    (tmp_path / "vendored" / "other.py").write_text("def f():\n    return 1\n")
    walks: list[Path] = []
    walk = audit._python_files

    def counted(root: Path, hidden: frozenset[str]) -> object:
        walks.append(root)
        return walk(root, hidden)

    monkeypatch.setattr(audit, "_python_files", counted)
    checker = audit.LeakAudit(
        [
            ("the environment", tmp_path),
            ("the repository", tiny.task("tinypkg.core.clamp").repo.tree),
        ]
    )
    clamp, parse_int = tiny.task("tinypkg.core.clamp"), tiny.task("tinypkg.core.parse_int")
    found = checker.leaks([clamp])
    assert found[clamp.id].path == tmp_path / "vendored" / "copy.py"
    assert checker.leaks([parse_int])[parse_int.id].what == "the environment"
    assert len(walks) == 2  # one walk per root, for both tasks
    # the same answers as auditing them together, and the task's own file is not a leak
    assert (
        audit.audit_leaks(
            [clamp, parse_int], [("the repository", tiny.task("tinypkg.core.clamp").repo.tree)]
        )
        == {}
    )
    together = audit.audit_leaks([clamp, parse_int], [("the environment", tmp_path)])
    assert together == {**found, **checker.leaks([parse_int])}
