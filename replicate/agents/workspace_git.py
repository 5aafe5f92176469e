"""A workspace's git repository, written directly: one commit of the folder, its index, `main`.

`git init`, `git add -A --force` and `git commit` cost three processes (~25 ms of CPU, ~32 ms of
an attempt's wall time on the sample library), paid by every attempt of `replicate run`: for an
agent that answers quickly, a third of its attempt.  The repository they make is a handful of
files in git's own formats: the objects (a blob per file, a tree per folder, the commit), the
index (version 2, each entry with the file's stat data, so git finds the files clean without
reading them), `HEAD` and `refs/heads/main`.  This module writes those, the objects in one pack
(git writes each as a file of its own, in a folder of its own).  The commit is the one
git would make: the same author, committer, dates and message, so the same commit id (a test
builds both and compares them, with `git status` and `git fsck` on ours).

Only the plain case is written here: regular files and symlinks, no `.gitattributes` (its
filters and line-ending rules change what `git add` stores) and no `.git` below the top (git
would record a submodule).  Anything else, and any error, returns False; the caller then runs
git itself.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shutil
import stat
import struct
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

NAME, EMAIL = "replicate", "replicate@localhost"
DATE = "946684800 +0000"  # 2000-01-01T00:00:00+00:00, in git's own form
MESSAGE = "task workspace"
IDENTITY = f"{NAME} <{EMAIL}> {DATE}"
_CONFIG = (
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
    "\tlogallrefupdates = true\n"
)


_KINDS = {b"commit": 1, b"tree": 2, b"blob": 3}
_Objects = dict[bytes, tuple[int, bytes]]  # id -> (pack type, content)


@dataclass(frozen=True)
class _Entry:
    path: bytes  # relative, "/"-separated
    mode: int  # 0o100644, 0o100755 or 0o120000
    sha: bytes  # 20 bytes
    info: os.stat_result


def write_repository(folder: Path) -> bool:
    """Make `folder` a git repository whose one commit (on `main`) holds every file in it, as
    `git init`, `git add -A --force` and `git commit` would; False (nothing usable written) when
    the folder holds anything this module does not write (see the module docstring)."""
    git = folder / ".git"
    if git.exists():
        return False
    try:
        files = sorted(_files(folder), key=lambda p: p[0])
        if any(_unplain(rel) for rel, _ in files):
            return False
        objects: _Objects = {}
        entries = [_stored(objects, rel, full) for rel, full in files]
        tree = _tree(objects, entries)
        commit = _object(
            objects,
            b"commit",
            b"tree %s\nauthor %s\ncommitter %s\n\n%s"
            % (tree.hex().encode(), IDENTITY.encode(), IDENTITY.encode(), MESSAGE.encode() + b"\n"),
        )
        _write_pack(git / "objects", objects)
        (git / "refs" / "heads").mkdir(parents=True, exist_ok=True)
        (git / "refs" / "tags").mkdir(exist_ok=True)
        (git / "refs" / "heads" / "main").write_text(commit.hex() + "\n")
        (git / "HEAD").write_text("ref: refs/heads/main\n")
        (git / "config").write_text(_CONFIG)
        (git / "index").write_bytes(_index(entries))
    except (OSError, ValueError, UnicodeError):
        shutil.rmtree(git, ignore_errors=True)  # nothing half made for git to take up
        return False
    return True


def _files(folder: Path) -> Iterator[tuple[bytes, Path]]:
    """Every file and symlink below `folder` (not `.git`), with its "/"-separated path; a
    ValueError for anything else (a socket, a device)."""
    for root, dirs, names in os.walk(folder):
        base = Path(root)
        if base == folder and ".git" in dirs:
            dirs.remove(".git")
        # a symlink to a folder is listed among the folders (and not walked into)
        for name in [*names, *(d for d in dirs if (base / d).is_symlink())]:
            full = base / name
            mode = full.lstat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                raise ValueError(f"not a file: {full}")
            yield os.fsencode(full.relative_to(folder).as_posix()), full


def _unplain(rel: bytes) -> bool:
    parts = rel.split(b"/")
    return b".git" in parts or parts[-1] == b".gitattributes"


def _stored(objects: _Objects, rel: bytes, full: Path) -> _Entry:
    info = full.lstat()
    if stat.S_ISLNK(info.st_mode):
        data, mode = os.fsencode(os.readlink(full)), 0o120000
    else:
        data = full.read_bytes()
        mode = 0o100755 if info.st_mode & stat.S_IXUSR else 0o100644
    return _Entry(rel, mode, _object(objects, b"blob", data), info)


def _object(objects: _Objects, kind: bytes, data: bytes) -> bytes:
    """An object to store; its binary id (the SHA-1 of `<kind> <size>\\0<data>`)."""
    sha = hashlib.sha1(b"%s %d\0%s" % (kind, len(data), data), usedforsecurity=False).digest()
    objects.setdefault(sha, (_KINDS[kind], data))
    return sha


def _write_pack(folder: Path, objects: _Objects) -> None:
    """Every object in one pack (version 2) and its index (version 2) under `folder/pack`: two
    files, where loose objects were a file and a folder each (~0.3 ms apiece on these disks)."""
    pack = [b"PACK" + struct.pack(">II", 2, len(objects))]
    at, places = 12, {}
    for sha, (kind, data) in objects.items():
        size, head = len(data), bytearray()
        byte = kind << 4 | size & 0x0F
        size >>= 4
        while size:
            head.append(byte | 0x80)
            byte, size = size & 0x7F, size >> 7
        head.append(byte)
        packed = bytes(head) + zlib.compress(data, 1)
        places[sha] = (at, zlib.crc32(packed))
        pack.append(packed)
        at += len(packed)
    body = b"".join(pack)
    checksum = hashlib.sha1(body, usedforsecurity=False).digest()
    names = sorted(places)
    firsts = Counter(sha[0] for sha in names)
    below = itertools.accumulate(firsts[byte] for byte in range(256))  # ids up to each byte
    index = b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *below)
    index += b"".join(names)
    index += b"".join(struct.pack(">I", places[sha][1]) for sha in names)
    index += b"".join(struct.pack(">I", places[sha][0]) for sha in names)
    index += checksum
    index += hashlib.sha1(index, usedforsecurity=False).digest()
    (folder / "info").mkdir(parents=True)
    (folder / "pack").mkdir()
    name = f"pack-{checksum.hex()}"
    (folder / "pack" / f"{name}.pack").write_bytes(body + checksum)
    (folder / "pack" / f"{name}.idx").write_bytes(index)


def _tree(objects: _Objects, entries: list[_Entry]) -> bytes:
    """Write the tree of `entries` (its subtrees first); its binary id."""
    files: dict[bytes, _Entry] = {}
    below: dict[bytes, list[_Entry]] = {}
    for entry in entries:
        head, sep, rest = entry.path.partition(b"/")
        if sep:
            below.setdefault(head, []).append(_Entry(rest, entry.mode, entry.sha, entry.info))
        else:
            files[head] = entry
    rows = [(name, b"%o" % e.mode, e.sha) for name, e in files.items()]
    rows += [(name, b"40000", _tree(objects, sub)) for name, sub in below.items()]
    # git orders a tree's entries by name, a folder's name as if it ended in "/"
    rows.sort(key=lambda row: row[0] + (b"/" if row[1] == b"40000" else b""))
    body = b"".join(b"%s %s\0%s" % (mode, name, sha) for name, mode, sha in rows)
    return _object(objects, b"tree", body)


def _index(entries: list[_Entry]) -> bytes:
    """The index (version 2) of `entries`, sorted by path as git sorts it."""
    out = [b"DIRC", struct.pack(">II", 2, len(entries))]
    for entry in sorted(entries, key=lambda e: e.path):
        info = entry.info
        fields = (
            info.st_ctime_ns // 1_000_000_000 & 0xFFFFFFFF,
            info.st_ctime_ns % 1_000_000_000,
            info.st_mtime_ns // 1_000_000_000 & 0xFFFFFFFF,
            info.st_mtime_ns % 1_000_000_000,
            info.st_dev & 0xFFFFFFFF,
            info.st_ino & 0xFFFFFFFF,
            entry.mode,
            info.st_uid & 0xFFFFFFFF,
            info.st_gid & 0xFFFFFFFF,
            info.st_size & 0xFFFFFFFF,
        )
        head = struct.pack(">10I", *fields) + entry.sha
        head += struct.pack(">H", min(len(entry.path), 0xFFF)) + entry.path
        out.append(head + b"\0" * (8 - len(head) % 8))
    body = b"".join(out)
    return body + hashlib.sha1(body, usedforsecurity=False).digest()
