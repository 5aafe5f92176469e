"""The leak audit: a reference body copied where the agent can see it is found, and the
fingerprints of files outside the repository are kept between gens."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.gen import audit
from replicate.gen.audit import audit_leaks
from tests.unit.minted import CORE, Tiny

OTHER = "def other(x):\n    a = x\n    b = a\n    return b\n"


def test_kept_fingerprints_find_the_same_leaks_without_parsing_again(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    lib = tmp_path / "lib"
    (lib / "z").mkdir(parents=True)  # searched after the files above it
    (lib / "z" / "vendored.py").write_text(CORE)  # a copy of the reference's module: a leak
    (lib / "other.py").write_text(OTHER)
    roots = [("the environment", lib), (audit.REPOSITORY, task.repo.tree)]
    parsed: list[str] = []
    real = audit.function_prints
    monkeypatch.setattr(audit, "function_prints", lambda text: parsed.append(text) or real(text))

    searched = audit_leaks([task], roots)  # as before: every file read and searched
    assert searched[task.id].path == lib / "z" / "vendored.py" and parsed == []
    cache = tmp_path / "cache"
    assert audit_leaks([task], roots, cache) == searched
    assert len(parsed) == 2  # each library file fingerprinted once; the repository never
    assert audit_leaks([task], roots, cache) == searched
    assert len(parsed) == 2  # the next gen parses nothing again
    (lib / "other.py").write_text(OTHER + "\n\nX = 1\n")
    assert audit_leaks([task], roots, cache) == searched
    assert len(parsed) == 3  # a changed file is fingerprinted again


def test_a_kept_fingerprint_that_matches_nothing_skips_the_file(tiny: Tiny, tmp_path: Path) -> None:
    task = tiny.task("tinypkg.core.clamp")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "other.py").write_text(OTHER)
    roots = [("the environment", lib)]
    assert audit_leaks([task], roots, tmp_path / "cache") == {}
    (lib / "vendored.py").write_text(CORE)
    assert audit_leaks([task], roots, tmp_path / "cache")[task.id].path == lib / "vendored.py"
