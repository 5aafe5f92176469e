"""Reading and writing a task batch directory (docs/design.md §1).

    DIR/specs/<id>/task.json            public TaskSpec
    DIR/specs/<id>/TASK.md              the prompt
    DIR/reference_impls/<id>/task.json  HiddenTask (trusted side)
    DIR/reference_impls/<id>/inputs.jsonl    one CallInput per line
    DIR/reference_impls/<id>/expected.jsonl  {"i": index, "outcome": {...}} per line
    DIR/reference_impls/<id>/sequences.jsonl one HiddenSequence per line (a class task's; absent
                                             when it has none)
    DIR/reference_impls/_repos/<repo_dir>/repo.json  RepoRecord
    DIR/reference_impls/_repos/<repo_dir>/tree/      pristine source snapshot at the commit
    DIR/reference_impls/_repos/<repo_dir>/meta/      distribution metadata (no code)

A reader takes only `specs/` folders that hold a `task.json`.  A batch is untrusted input: every
name and path it gives is checked when a task is loaded (`replicate.batch.checks`), and its
files against the manifest `replicate gen` wrote (`replicate.batch.manifest`).  Its files are
read through `replicate.confined`, so no symlink is followed, and the symlinks it holds are
refused (`replicate.batch.links`), with or without the manifest.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from replicate import confined, jsonl
from replicate.batch import checks, links, minting
from replicate.batch.lines import parse_lines
from replicate.batch.manifest import Manifest, differences, read_manifest
from replicate.core import (
    MAX_PART,
    CallInput,
    HiddenSequence,
    HiddenTask,
    RepoRecord,
    TaskSpec,
    slug,
)
from replicate.errors import ReplicateError
from replicate.languages import Language, get_language

SPECS = "specs"
HIDDEN = "reference_impls"
REPOS = "_repos"
SEQUENCES = "sequences.jsonl"

# An expected outcome as a batch stores it: the runner's `wire.Outcome` less the inputs it shows
# (`args_in`, `kwargs_in`, `ctor_in`) and its time, read back from JSON unchecked. The wire is a
# layer above this one, so the stored form is typed as a mapping; code that takes an outcome
# either stored or fresh from a run takes this type, which `wire.Outcome` is one of.
StoredOutcome = Mapping[str, Any]


@dataclass(frozen=True)
class RepoSnapshot:
    record: RepoRecord
    root: Path  # DIR/reference_impls/_repos/<repo_dir>

    @property
    def tree(self) -> Path:
        return self.root / "tree"

    @property
    def meta(self) -> Path:
        return self.root / "meta"


@dataclass(frozen=True)
class TaskFiles:
    """What a task's own files hold, read and checked (its repository aside)."""

    spec: TaskSpec
    hidden: HiddenTask
    inputs: tuple[CallInput, ...]
    expected: Mapping[int, StoredOutcome]
    prompt: str
    sequences: tuple[HiddenSequence, ...] = field(default=(), kw_only=True)  # a class task's


@dataclass(frozen=True)
class LoadedTask(TaskFiles):
    repo: RepoSnapshot

    @property
    def id(self) -> str:
        return self.spec.id

    def language(self) -> Language:
        """The adapter of the task's language: how its target is stubbed and a candidate spliced."""
        return get_language(self.spec.language)

    def original_source(self) -> bytes:
        """The target file as the snapshot holds it (hidden: the trusted side only)."""
        return confined.read_bytes(self.repo.tree, self.hidden.target.path)

    def stubbed_source(self) -> bytes:
        """The target file with the target's body replaced by the stub, as the agent sees it."""
        return self.language().stub(self.original_source(), self.hidden.target)


def _write_json(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _dump(model: Any) -> str:
    return model.model_dump_json(indent=2) + "\n"


def write_repo(batch: Path, repo_dir: str, record: RepoRecord) -> Path:
    """Write `repo.json`; the caller fills `tree/` and `meta/`. Returns the repo folder."""
    root = batch / HIDDEN / REPOS / repo_dir
    _write_json(root / "repo.json", _dump(record))
    return root


def write_task(
    batch: Path,
    spec: TaskSpec,
    hidden: HiddenTask,
    prompt: str,
    inputs: Iterable[CallInput],
    expected: Mapping[int, StoredOutcome],
    sequences: Iterable[HiddenSequence] = (),
) -> None:
    public = batch / SPECS / spec.id
    secret = batch / HIDDEN / spec.id
    lines = "".join(jsonl.model_line(s) for s in sequences)
    if lines:
        _write_json(secret / SEQUENCES, lines)
    rows = ({"i": i, "outcome": expected[i]} for i in sorted(expected))
    _write_json(secret / "expected.jsonl", "".join(jsonl.dumps(r, sort_keys=True) for r in rows))
    _write_json(secret / "inputs.jsonl", "".join(jsonl.model_line(i) for i in inputs))
    _write_json(secret / "task.json", _dump(hidden))
    _write_json(public / "TASK.md", prompt)
    _write_json(public / "task.json", _dump(spec))


def remove_task(batch: Path, task_id: str) -> None:
    """Remove the task's two folders; a task id that is no plain name is refused (it would lead
    out of the batch), and a folder that is a symlink is unlinked, never followed."""
    checks.check_name(task_id, task_id, "task id")
    for folder in (batch / SPECS / task_id, batch / HIDDEN / task_id):
        if folder.is_symlink():
            folder.unlink()
        elif folder.is_dir():
            shutil.rmtree(folder)


def _ids_by_symbol_part(ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Task ids by the symbol's part of the id (`<repo>__<symbol part>__<digest>`).  Both the
    repository's and the symbol's part may hold `__`, so an id is filed under every tail."""
    found: dict[str, list[str]] = {}
    for ident in ids:
        head = ident.rsplit("__", 1)[0]
        at = head.find("__")
        while at >= 0:
            found.setdefault(head[at + 2 :], []).append(ident)
            at = head.find("__", at + 1)
    return {part: tuple(dict.fromkeys(idents)) for part, idents in found.items()}


class Batch:
    """A task batch on disk; tasks are loaded on demand.

    With a `manifest` (what `Batch.open` reads unless told not to verify), loading a task first
    checks that task's files and its repository's snapshot against it, once per batch object."""

    def __init__(self, root: Path, manifest: Manifest | None = None) -> None:
        self.root = root
        self._ids = tuple(sorted(p.parent.name for p in (root / SPECS).glob("*/task.json")))
        self._known = frozenset(self._ids)
        self._by_part = _ids_by_symbol_part(self._ids)
        self._manifest = manifest
        self._verified: set[str] = set()
        self._verify_lock = threading.Lock()
        self._unlinked: set[str] = set()  # folders found without a symlink that leads anywhere

    @classmethod
    def open(cls, path: str | Path, *, verify: bool = True) -> Batch:
        root = Path(path)
        if not root.exists():
            raise ReplicateError(f"no such task directory: {path}")
        if not root.is_dir():
            raise ReplicateError(f"not a directory: {path}")
        root = root.resolve()
        links.refuse_top_links(root)
        batch = cls(root)
        if verify:
            minting.check_finished(root, len(batch.ids))
        if not batch.ids:
            raise ReplicateError(
                f"no tasks in {path} (expected {path}/{SPECS}/<id>/task.json; make one with "
                "`replicate gen`)"
            )
        for ident in batch.ids:
            checks.check_name(ident, ident, "folder name")
        if not verify:
            return batch
        manifest = read_manifest(root)
        batch._check_task_list(manifest)
        return cls(root, manifest)

    def _check_task_list(self, manifest: Manifest) -> None:
        """The tasks on disk are the tasks minted: none added, none removed."""
        minted = {
            path.split("/")[1]
            for path in manifest.files
            if path.startswith(f"{SPECS}/") and path.endswith("/task.json") and path.count("/") == 2
        }
        added = sorted(set(self._ids) - minted)
        removed = sorted(minted - set(self._ids))
        if added or removed:
            what = f"task {added[0]} was added" if added else f"task {removed[0]} was removed"
            raise ReplicateError(
                f"{self.root}: batch edited after minting: {what}; re-mint it, or pass "
                "--no-verify to trust it as it is"
            )

    def verify(self, prefix: str, task_id: str) -> None:
        """Check the files under `prefix` against the manifest (once); a one-line error if not."""
        if self._manifest is None:
            return
        with self._verify_lock:
            if prefix in self._verified:
                return
            found = differences(self.root, self._manifest, prefix)
            if found:
                raise ReplicateError(
                    f"task {task_id}: batch edited after minting: {found[0]}"
                    + (f" (and {len(found) - 1} more)" if len(found) > 1 else "")
                    + "; re-mint it, or pass --no-verify to trust it as it is"
                )
            self._verified.add(prefix)

    @property
    def ids(self) -> tuple[str, ...]:
        return self._ids

    def select(self, ids: Iterable[str] = (), limit: int | None = None) -> tuple[str, ...]:
        """Task ids by id or by symbol (`pkg.mod.func`), in the order given; all when none."""
        chosen = tuple(dict.fromkeys(self.resolve(name) for name in ids)) or self._ids
        return chosen[:limit] if limit is not None else chosen

    def resolve(self, name: str) -> str:
        """The id of a task named by its id or by its symbol (when that symbol is unique)."""
        if name in self._known:
            return name
        part = slug(name)[:MAX_PART]  # once, whatever the number of tasks
        by_symbol = [i for i in self._by_part.get(part, ()) if self.spec(i).source.symbol == name]
        if len(by_symbol) == 1:
            return by_symbol[0]
        if by_symbol:
            raise ReplicateError(f"{name!r} names {len(by_symbol)} tasks; give a task id")
        shown = name if len(name) <= 200 else f"{name[:200]}..."
        raise ReplicateError(f"unknown task id {shown!r} ({len(self._ids)} tasks in {self.root})")

    def names(self) -> dict[str, str]:
        """Every name `resolve` takes without error, to its task id: the ids, and the symbols
        that name one task each.  Reads every task's spec (a server does it once, at its start);
        a spec that does not load leaves its symbol out."""
        tasks_of: dict[str, list[str]] = {}
        for ident in self._ids:
            try:
                tasks_of.setdefault(self.spec(ident).source.symbol, []).append(ident)
            except ReplicateError:
                continue
        found = {symbol: ids[0] for symbol, ids in tasks_of.items() if len(ids) == 1}
        return found | {ident: ident for ident in self._ids}

    def spec(self, task_id: str) -> TaskSpec:
        return _load_model(TaskSpec, self.root, f"{SPECS}/{task_id}/task.json", task_id)

    def load(self, task_id: str) -> LoadedTask:
        task_id = self.resolve(task_id)
        self.verify(f"{SPECS}/{task_id}/", task_id)
        self.verify(f"{HIDDEN}/{task_id}/", task_id)
        for folder in (f"{SPECS}/{task_id}", f"{HIDDEN}/{task_id}"):
            self._refuse_links(folder, task_id)
        files = read_task_files(self.root, task_id)
        repo = self.repo(files.hidden.repo_dir, task_id)
        _check_target_file(repo, files.hidden, task_id)
        return LoadedTask(
            spec=files.spec,
            hidden=files.hidden,
            inputs=files.inputs,
            expected=files.expected,
            repo=repo,
            prompt=files.prompt,
            sequences=files.sequences,
        )

    def repo(self, repo_dir: str, task_id: str = "") -> RepoSnapshot:
        checks.check_name(task_id or repo_dir, repo_dir, "repo_dir")
        folder = f"{HIDDEN}/{REPOS}/{repo_dir}"
        self.verify(f"{folder}/", task_id or repo_dir)
        self._refuse_links(folder, task_id or repo_dir, tree=f"{folder}/tree")
        root = self.root / folder
        record = _load_model(RepoRecord, self.root, f"{folder}/repo.json", task_id or repo_dir)
        checks.check_repo(task_id or repo_dir, record)
        if not (root / "tree").is_dir() or (root / "tree").is_symlink():
            raise ReplicateError(f"task {task_id}: broken batch: {root}/tree is missing")
        return RepoSnapshot(record=record, root=root)

    def _refuse_links(self, folder: str, task_id: str, tree: str | None = None) -> None:
        """A one-line error naming the first symlink under `folder` (`links.first_link`)."""
        if folder in self._unlinked:
            return
        found = links.first_link(self.root, folder, tree)
        if found:
            raise ReplicateError(f"task {task_id}: unsafe batch: {found}")
        with self._verify_lock:
            self._unlinked.add(folder)

    def repos(self) -> tuple[RepoSnapshot, ...]:
        folder = self.root / HIDDEN / REPOS
        names = sorted(p.parent.name for p in folder.glob("*/repo.json")) if folder.is_dir() else []
        return tuple(self.repo(name) for name in names)


def read_task_files(root: Path, task_id: str) -> TaskFiles:
    """Read the public and hidden files of task `task_id` of the batch at `root` (no symlink
    followed) and check them; ReplicateError (one line) when one cannot be read or is broken.
    `gen` reads each task back so, as soon as it is written."""
    spec = _load_model(TaskSpec, root, f"{SPECS}/{task_id}/task.json", task_id)
    secret = f"{HIDDEN}/{task_id}"
    hidden = _load_model(HiddenTask, root, f"{secret}/task.json", task_id)
    checks.check_task(task_id, spec, hidden)
    inputs = tuple(_load_inputs(root, f"{secret}/inputs.jsonl", task_id))
    expected = _load_expected(root, f"{secret}/expected.jsonl", task_id)
    missing = [item.index for item in inputs if item.index not in expected]
    if missing:
        raise ReplicateError(
            f"task {task_id}: broken batch: input {missing[0]} has no expected outcome"
        )
    prompt = _read(root, f"{SPECS}/{task_id}/TASK.md", task_id)
    sequences = tuple(_load_sequences(root, f"{secret}/{SEQUENCES}", task_id))
    return TaskFiles(spec, hidden, inputs, expected, prompt, sequences=sequences)


def _check_target_file(repo: RepoSnapshot, hidden: HiddenTask, task_id: str) -> None:
    """The target is a regular file of the snapshot, reached without a symlink."""
    try:
        os.close(confined.open_file(repo.tree, hidden.target.path))
    except confined.ConfinementError as exc:
        raise ReplicateError(f"task {task_id}: unsafe target.path: {exc}") from None
    except OSError as exc:
        raise ReplicateError(
            f"task {task_id}: broken batch: target file {hidden.target.path}: {exc.strerror}"
        ) from None


def _read(root: Path, relpath: str, task_id: str) -> str:
    """A batch file's text, read under `root` without following a symlink."""
    path = root / relpath
    try:
        return confined.read_bytes(root, relpath).decode("utf-8")
    except confined.ConfinementError as exc:
        raise ReplicateError(f"task {task_id}: unsafe batch: {exc}") from None
    except OSError as exc:
        raise ReplicateError(
            f"task {task_id}: broken batch: cannot read {path}: {exc.strerror}"
        ) from None
    except UnicodeDecodeError:
        raise ReplicateError(f"task {task_id}: broken batch: {path} is not UTF-8") from None


def _load_model(model: Any, root: Path, relpath: str, task_id: str) -> Any:
    text = _read(root, relpath, task_id)
    path = root / relpath
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "document"
        raise ReplicateError(
            f"task {task_id}: broken {path.name} ({path}): {where}: {first.get('msg')}"
        ) from None


def _load_inputs(root: Path, relpath: str, task_id: str) -> list[CallInput]:
    out = parse_lines(CallInput, _read(root, relpath, task_id), root / relpath, task_id)
    for item in out:
        checks.check_origin(task_id, item.origin)
    return out


def _load_sequences(root: Path, relpath: str, task_id: str) -> list[HiddenSequence]:
    """A class task's hidden call sequences (none without the file)."""
    if not (root / relpath).exists() and not (root / relpath).is_symlink():
        return []
    text = _read(root, relpath, task_id)
    out = parse_lines(HiddenSequence, text, root / relpath, task_id)
    for item in out:
        checks.check_origin(task_id, item.sequence.origin)
    return out


def _load_expected(root: Path, relpath: str, task_id: str) -> dict[int, StoredOutcome]:
    out: dict[int, StoredOutcome] = {}
    path = root / relpath
    for number, line in enumerate(jsonl.split(_read(root, relpath, task_id)), 1):
        try:
            row = json.loads(line)
            out[int(row["i"])] = row["outcome"]
        except (ValueError, KeyError, TypeError):
            raise ReplicateError(f"task {task_id}: broken {path} at line {number}") from None
    return out
