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


def test_fingerprints_outside_the_repository_are_kept_between_gens(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tmp_path / "env"
    env.mkdir()
    copy = env / "copy.py"
    copy.write_bytes((tiny.repo / CORE_PATH).read_bytes())
    parsed: list[str] = []
    fingerprints = audit.fingerprints

    def counted(text: str) -> audit.FilePrints:
        parsed.append(text)
        return fingerprints(text)

    monkeypatch.setattr(audit, "fingerprints", counted)
    clamp = tiny.task("tinypkg.core.clamp")
    roots = [("the environment", env), ("the repository", clamp.repo.tree)]
    cache = tmp_path / "cache"

    def one_gen(kept: Path | None) -> dict[str, audit.Leak]:
        checker = audit.LeakAudit(roots, kept)
        try:
            return checker.leaks([clamp])
        finally:
            checker.close()

    first = one_gen(cache)
    assert first[clamp.id].path == copy and parsed  # the positive control: it parsed
    parsed.clear()
    assert one_gen(cache) == first
    assert parsed == []  # the environment's file came from the cache (the repository's did not
    # need parsing: the copy is found first)
    assert one_gen(None) == first and parsed  # without the cache, parsed again
    parsed.clear()
    copy.write_text("def clamp():\n    return 1\n")  # changed: parsed again, no longer a leak
    assert one_gen(cache) == {}
    assert parsed
