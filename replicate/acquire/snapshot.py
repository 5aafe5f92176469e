"""Snapshot a plain directory into a deterministic git commit (same content, same commit id)."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from replicate.acquire.commands import GitFailed, run_git
from replicate.cache import file_lock
from replicate.errors import ReplicateError
from replicate.scratch import temporary_dir

SKIP_DIRS = frozenset(
    {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".venv"}
)
SKIP_TOP_DIRS = frozenset({"build", "dist"})
SKIP_FILES = frozenset({".git"})
SKIP_SUFFIXES = (".pyc", ".pyo")
MAX_FILES = 200_000  # a tree past these is not a repository (`/`, a home folder): refused
MAX_BYTES = 4 << 30
SYSTEM_TREES = ("/proc", "/sys", "/dev")  # kernel and device files: never a repository

_IDENTITY = {
    "GIT_AUTHOR_NAME": "replicate",
    "GIT_AUTHOR_EMAIL": "replicate@localhost",
    "GIT_AUTHOR_DATE": "946684800 +0000",
    "GIT_COMMITTER_NAME": "replicate",
    "GIT_COMMITTER_EMAIL": "replicate@localhost",
    "GIT_COMMITTER_DATE": "946684800 +0000",
}
_MESSAGE = b"replicate snapshot\n"
_FIXED_CONFIG = ["-c", "commit.gpgSign=false", "-c", "i18n.commitEncoding=UTF-8"]


@dataclass(frozen=True)
class Entry:
    """One file of the snapshot: repo-relative POSIX path, git mode, absolute path on disk."""

    path: str
    mode: str
    source: Path


def snapshot_dir(directory: Path, cache: Path) -> tuple[Path, str]:
    """Commit the files of `directory` into its snapshot repository; return (git dir, commit id).

    Skipped: VCS and tool caches (`.git`, `__pycache__`, `*.pyc`, `.pytest_cache`, `.mypy_cache`,
    `.ruff_cache`, `*.egg-info`, `.tox`, `.venv`) anywhere, and `build/`, `dist/` at the top.
    Modes are 100755 for files with the owner exec bit, else 100644; symlinks are stored as links.
    The commit has no parent and a fixed author, committer, date and message. The walk stays on
    `directory`'s file system and follows no symlink; special files (devices, fifos, sockets) and
    entries that vanish while it walks are left out; `/` and the kernel's trees are refused, and
    so is a tree past `MAX_FILES` files or `MAX_BYTES` bytes.
    """
    refuse_system_tree(directory)
    entries = collect_entries(directory)
    if not entries:
        raise ReplicateError(f"{directory} is empty")
    key = hashlib.sha256(str(directory).encode()).hexdigest()[:16]
    git_dir = cache / "snapshots" / key
    with file_lock(cache / "snapshots" / f"{key}.lock"):
        try:
            _init_repo(git_dir)
            commit = _commit_entries(git_dir, entries)
        except GitFailed as exc:
            raise ReplicateError(f"cannot snapshot {directory}: {exc.line}") from exc
    return git_dir, commit


def _skipped_dir(name: str, top: bool) -> bool:
    return name in SKIP_DIRS or name.endswith(".egg-info") or (top and name in SKIP_TOP_DIRS)


def refuse_system_tree(directory: Path) -> None:
    """A one-line error for `/` and the kernel's and devices' trees (/proc, /sys, /dev)."""
    text = str(directory)
    if directory == Path(directory.anchor):
        raise ReplicateError(f"cannot snapshot {text}: the file system's root is not a repository")
    if any(text == top or text.startswith(top + "/") for top in SYSTEM_TREES):
        raise ReplicateError(f"cannot snapshot {text}: a system folder is not a repository")


class _Tally:
    """The files and bytes the walk has kept so far, refused past the limits."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files = 0
        self.bytes = 0

    def add(self, size: int) -> None:
        self.files += 1
        self.bytes += size
        if self.files > MAX_FILES or self.bytes > MAX_BYTES:
            raise ReplicateError(
                f"cannot snapshot {self.directory}: more than {MAX_FILES} files or "
                f"{MAX_BYTES >> 30} GiB (not a repository?)"
            )


def collect_entries(directory: Path) -> list[Entry]:
    """The files to snapshot, sorted by path; symlinks (to files or folders) are entries,
    never followed. Folders on another file system (a mount inside the tree) are left out."""
    entries: list[Entry] = []
    device = directory.stat().st_dev
    tally = _Tally(directory)
    for current, dirnames, filenames in os.walk(directory, followlinks=False):
        here = Path(current)
        top = here == directory
        kept_dirs: list[str] = []
        for name in sorted(dirnames):
            if _skipped_dir(name, top):
                continue
            info = _lstat(here / name)
            if info is None:
                continue
            if stat.S_ISLNK(info.st_mode):
                filenames.append(name)
            elif stat.S_ISDIR(info.st_mode) and info.st_dev == device:
                kept_dirs.append(name)
        dirnames[:] = kept_dirs
        for name in sorted(filenames):
            if name in SKIP_FILES or name.endswith(SKIP_SUFFIXES):
                continue
            entry = _entry(directory, here / name, tally)
            if entry is not None:
                entries.append(entry)
    entries.sort(key=lambda e: e.path)
    return entries


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except OSError:  # gone while the walk went on (a process's /proc entry), or unreadable
        return None


def _entry(root: Path, path: Path, tally: _Tally) -> Entry | None:
    info = _lstat(path)
    if info is None:
        return None
    rel = path.relative_to(root).as_posix()
    if stat.S_ISLNK(info.st_mode):
        tally.add(0)
        return Entry(rel, "120000", path)
    if not stat.S_ISREG(info.st_mode):
        return None  # sockets, fifos, devices
    tally.add(info.st_size)
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    return Entry(rel, mode, path)


def _init_repo(git_dir: Path) -> None:
    if (git_dir / "HEAD").is_file():
        return
    git_dir.parent.mkdir(parents=True, exist_ok=True)
    run_git(["init", "--quiet", "--bare", "--object-format=sha1", str(git_dir)])


def _commit_entries(git_dir: Path, entries: list[Entry]) -> str:
    by_paths = [e for e in entries if e.mode != "120000" and "\n" not in str(e.source)]
    blob_ids = _hash_files(git_dir, by_paths)
    for entry in entries:
        if entry.path not in blob_ids:
            blob_ids[entry.path] = _hash_one(git_dir, entry)
    index_lines = "".join(f"{e.mode} {blob_ids[e.path]}\t{e.path}\0" for e in entries)
    with temporary_dir("replicate-index-") as tmp:
        index_env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        info_file = Path(tmp) / "info"
        info_file.write_bytes(index_lines.encode("utf-8", "surrogateescape"))
        with info_file.open("rb") as stream:
            run_git(
                ["update-index", "-z", "--index-info"],
                cwd=git_dir,
                stdin=stream,
                extra_env=index_env,
            )
        tree = run_git(["write-tree"], cwd=git_dir, extra_env=index_env).strip()
        message_file = Path(tmp) / "message"
        message_file.write_bytes(_MESSAGE)
        with message_file.open("rb") as stream:
            commit = run_git(
                [*_FIXED_CONFIG, "commit-tree", "--no-gpg-sign", tree],
                cwd=git_dir,
                stdin=stream,
                extra_env=_IDENTITY,
            ).strip()
    run_git(["update-ref", f"refs/snapshots/{commit}", commit], cwd=git_dir)
    run_git(["update-ref", "HEAD", commit], cwd=git_dir)
    return commit


def _hash_files(git_dir: Path, entries: list[Entry]) -> dict[str, str]:
    if not entries:
        return {}
    with temporary_dir("replicate-paths-") as tmp:
        listing = Path(tmp) / "paths"
        listing.write_bytes(
            "".join(f"{e.source}\n" for e in entries).encode("utf-8", "surrogateescape")
        )
        with listing.open("rb") as stream:
            out = run_git(
                ["hash-object", "-w", "--no-filters", "--stdin-paths"], cwd=git_dir, stdin=stream
            )
    ids = out.split()
    if len(ids) != len(entries):
        raise GitFailed(f"hash-object returned {len(ids)} ids for {len(entries)} files")
    return {e.path: sha for e, sha in zip(entries, ids, strict=True)}


def _hash_one(git_dir: Path, entry: Entry) -> str:
    """Hash a symlink's target text, or a file whose path `--stdin-paths` cannot carry."""
    if entry.mode == "120000":
        data = os.fsencode(os.readlink(entry.source))
    else:
        data = entry.source.read_bytes()
    with tempfile.TemporaryFile() as stream:
        stream.write(data)
        stream.seek(0)
        args = ["hash-object", "-w", "--no-filters", "--stdin"]
        return run_git(args, cwd=git_dir, stdin=stream).strip()
