"""Moving one repository's minted batch into the shared batch, replacing what an earlier minting
of that repository left there (at the commits `placing` says; every commit with `--replace`),
then re-writing the manifest over the whole batch and its
difficulty file (the staged batch's entries taken over, not measured again) and its ledger of
targets (`funnel.jsonl`: the repository's lines replaced by the staged batch's)."""

from __future__ import annotations

import shutil
from pathlib import Path

from pydantic import ValidationError

from replicate.batch import (
    HIDDEN,
    MANIFEST,
    REPOS,
    SPECS,
    read_difficulty,
    remove_task,
    write_difficulty,
    write_manifest,
)
from replicate.core import HiddenTask, RepoRecord
from replicate.gen.ledger import carry_over


def merge_repo(batch: Path, staged: Path, key: str, drop: tuple[str, ...] | None = None) -> None:
    """Put the tasks and snapshot of `staged` (a batch of repository `key`) into `batch`, in
    place of what `batch` holds of `key` at the commits `drop` (None: at every commit)."""
    drop_repo(batch, key, drop)
    measured = read_difficulty(staged)
    for top in (SPECS, HIDDEN):
        source = staged / top
        if not source.is_dir():
            continue
        for item in sorted(source.iterdir()):
            rel = f"{top}/{item.name}"
            if rel == MANIFEST:
                continue
            if item.name == REPOS:
                for repo in sorted(item.iterdir()):
                    _replace(repo, batch / HIDDEN / REPOS / repo.name)
            else:
                _replace(item, batch / rel)
    write_manifest(batch)
    write_difficulty(batch, measured.tasks if measured is not None else None)
    carry_over(batch, staged, key, drop)


def prune_repo(batch: Path, key: str, keep: str) -> None:
    """Every commit of repository `key` but `keep` out of `batch`, its manifest and its ledger of
    targets (`--replace`, when `keep` is minted there already)."""
    records = [_record(p) for p in (batch / HIDDEN / REPOS).glob("*/repo.json")]
    others = {r.commit for r in records if r is not None and r.key == key and r.commit != keep}
    forget_repo(batch, key, tuple(sorted(others)))


def forget_repo(batch: Path, key: str, commits: tuple[str, ...]) -> None:
    """Repository `key` at `commits` out of `batch`, its manifest and its ledger of targets."""
    if not commits:
        return
    drop_repo(batch, key, commits)
    write_manifest(batch)
    carry_over(batch, None, key, commits)


def drop_repo(batch: Path, key: str, commits: tuple[str, ...] | None = None) -> None:
    """Remove every task and snapshot of repository `key` at `commits` (None: at any commit)
    from `batch`."""
    repos = batch / HIDDEN / REPOS
    dirs = {p.parent.name for p in repos.glob("*/repo.json") if _held(p, key, commits)}
    if not dirs:
        return
    for path in (batch / HIDDEN).glob("*/task.json"):
        if path.parent.name == REPOS:
            continue
        try:
            hidden = HiddenTask.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            continue
        if hidden.repo_dir in dirs:
            remove_task(batch, path.parent.name)  # the folder read, whatever id it claims
    for name in dirs:
        shutil.rmtree(repos / name)


def _held(repo_json: Path, key: str, commits: tuple[str, ...] | None) -> bool:
    record = _record(repo_json)
    return (
        record is not None and record.key == key and (commits is None or record.commit in commits)
    )


def _record(repo_json: Path) -> RepoRecord | None:
    try:
        return RepoRecord.model_validate_json(repo_json.read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def _replace(source: Path, dest: Path) -> None:
    if dest.is_dir() and not dest.is_symlink():
        shutil.rmtree(dest)
    elif dest.exists() or dest.is_symlink():
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(source), str(dest))
