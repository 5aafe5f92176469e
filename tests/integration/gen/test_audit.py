"""The leak audit gen runs on each task as it is minted: the visible files are read once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from replicate.batch import LoadedTask
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


def _env_with_copy(tiny: Tiny, tmp_path: Path) -> tuple[Path, Path]:
    """An environment folder holding a copy of the target's file (a leak) and one other file."""
    env = tmp_path / "env"
    env.mkdir()
    copy = env / "copy.py"
    copy.write_bytes((tiny.repo / CORE_PATH).read_bytes())
    (env / "other.py").write_text("def f():\n    return 1\n")
    return env, copy


def _counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[str]:
    """The texts `audit.<name>` is called on from now."""
    texts: list[str] = []
    original = getattr(audit, name)

    def counted(text: str) -> object:
        texts.append(text)
        return original(text)

    monkeypatch.setattr(audit, name, counted)
    return texts


def _gens(
    roots: list[tuple[str, Path]], task: LoadedTask
) -> Callable[[Path | None], dict[str, audit.Leak]]:
    """One gen's audit of `task`, with the cache folder given (or none)."""

    def one_gen(kept: Path | None) -> dict[str, audit.Leak]:
        checker = audit.LeakAudit(roots, kept)
        try:
            return checker.leaks([task])
        finally:
            checker.close()

    return one_gen


def test_fingerprints_outside_the_repository_are_kept_between_gens(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, copy = _env_with_copy(tiny, tmp_path)
    parsed = _counted(monkeypatch, "fingerprints")
    clamp = tiny.task("tinypkg.core.clamp")
    one_gen = _gens([("the environment", env), ("the repository", clamp.repo.tree)], clamp)
    cache = tmp_path / "cache"
    first = one_gen(cache)
    assert first[clamp.id].path == copy and parsed  # the control: parsed
    parsed.clear()
    assert one_gen(cache) == first
    assert parsed == []  # the environment's file came from the cache (the repository's did not
    # need parsing: the copy is found first)
    assert one_gen(None) == first and parsed  # without the cache, parsed again
    parsed.clear()
    copy.write_text("def clamp():\n    return 1\n")  # changed: parsed again, no longer a leak
    assert one_gen(cache) == {}
    assert parsed


def test_identifiers_outside_the_repository_are_kept_between_gens(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env, copy = _env_with_copy(tiny, tmp_path)
    read = _counted(monkeypatch, "words_mask")
    clamp = tiny.task("tinypkg.core.clamp")
    tree = clamp.repo.tree
    in_repo = len(list(audit._python_files(tree, frozenset())))
    one_gen = _gens([("the environment", env), ("the repository", tree)], clamp)
    cache = tmp_path / "cache"
    first = one_gen(cache)
    assert first[clamp.id].path == copy
    assert len(read) == 2 + in_repo  # the control: every file read
    read.clear()
    assert one_gen(cache) == first and len(read) == in_repo  # the environment's: kept
    read.clear()
    assert one_gen(None) == first and len(read) == 2 + in_repo  # without the cache: read again
    read.clear()
    copy.write_text("def clamp():\n    return 1\n")  # changed: read again, no longer a leak
    assert one_gen(cache) == {} and len(read) == 1 + in_repo


def test_a_class_task_leaks_where_one_of_its_members_bodies_is_seen(
    tiny: Tiny, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A class task hides several bodies: each member's is a needle of its own (the control: the
    class target looked for as one body, as before, finds nothing)."""
    env, copy = _env_with_copy(tiny, tmp_path)
    clamp = tiny.task("tinypkg.core.clamp")
    member = clamp.hidden.target
    whole = member.model_copy(
        update={"kind": "class", "qualname": "Clamps", "class_name": None, "members": (member,)}
    )
    task = replace(clamp, hidden=clamp.hidden.model_copy(update={"target": whole}))
    roots = [("the environment", env)]
    assert audit.audit_leaks([task], roots) == {task.id: audit.Leak("the environment", copy)}
    monkeypatch.setattr(audit, "_hidden_bodies", lambda t: [(t.id, t.hidden.target)])
    assert audit.audit_leaks([task], roots) == {}
