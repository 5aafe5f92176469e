"""Compiled code of a repository's modules for the jail, never the target's own.

A jailed run imports the repository's package from source: the tree is history-free (no
``__pycache__``), mounted read-only, and the runner runs with ``-B``. Compiling the package is a
large part of grading a small function (samplelib: ~10 ms of a ~25 ms grade), and gen, grading
and the strength check import the same package thousands of times. So each (tree, interpreter)
pair is compiled once on the host, with the repository environment's interpreter (code objects
are version-specific), into a *full* table ``{source path: (size, mtime_ns, marshalled code)}``,
split by a hash of each path into up to `SHARDS` *shards*. A jail running a target mounts,
read-only, every shard but the one its file falls in, and a copy of that one **without the
target's entry**: the runner serves a module from them when the source's size and mtime still
match and compiles from source otherwise (the candidate, the target, anything changed). A whole
table per target file held the package's compiled code once per file (boltons 24.1.0, a table
for each of its 30 modules: 33 MB per tree); the shards hold it once and each file's copy about
a sixteenth of it (4.3 MB in all).

``PYTHONPYCACHEPREFIX`` would do the same with less code but moves the cache of *every* module,
the standard library's included: a cold runner then compiled its own imports (+150 ms).

The target's code must never reach a jail: it is the reference implementation. Nor may the full
table, the shard its file falls in or another target's copy of it (all hold this target's code):
they stay in the cache, which is not mounted. Compiling runs no repository code (``compile``
only parses). When anything fails there is no table and modules compile from source as before.

The runner's package is compiled the same way (`compiled_runner`), with the wire module it loads
from beside it: every jail started it from source, compiling its ~2,000 lines each time; the
interpreter runs a compiled file given as its script directly, and imports the parts beside it
from their compiled files.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import marshal
import os
import subprocess
import tempfile
import types
import warnings
from dataclasses import dataclass
from importlib.util import MAGIC_NUMBER
from pathlib import Path

from replicate.cache import publish
from replicate.core import PARSE_LOCK
from replicate.jail.runner.base import wire_beside

COMPILE_TIMEOUT_S = 300.0
MAX_FILE_BYTES = 4 << 20
SHARDS = 16

Table = dict[str, tuple[int, int, bytes]]  # source path: (size, mtime_ns, marshalled code)
_COMPILE = """
import marshal, os, sys
tree, cap, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
table = {}
for top, dirs, files in os.walk(tree):
    dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
    for name in sorted(files):
        path = os.path.join(top, name)
        if not name.endswith(".py") or os.path.islink(path):
            continue
        st = os.stat(path)
        if st.st_size > cap:
            continue
        with open(path, "rb") as handle:
            source = handle.read()
        try:
            code = compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        table[path] = (st.st_size, st.st_mtime_ns, marshal.dumps(code))
with open(out, "wb") as handle:
    handle.write(marshal.dumps(table))
"""


def _key(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


@functools.cache
def _fingerprint(tree: str) -> str:
    """Every source file's path, size and mtime: a tree checked out again gets a new table
    (an old table would still be correct, every entry stale, and no faster than none)."""
    found = []
    for top, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(top, name)
            if name.endswith(".py") and not os.path.islink(path):
                st = os.stat(path)
                found.append(f"{path}\0{st.st_size}\0{st.st_mtime_ns}")
    return _key(*found)


def _built(final: Path, python: Path, script: str, *args: str) -> Path:
    """`final`, made (unless it exists) by running `script` in `python` with `args` and the
    path of the file to write last; published atomically."""
    if not final.is_file():
        final.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=final.parent) as scratch:
            out = _run_in(Path(scratch), python, script, *args)
            publish(out.read_bytes(), final)
    return final


def _run_in(scratch: Path, python: Path, script: str, *args: str | Path) -> Path:
    """Run `script` in `python` in the `scratch` folder (never in the caller's working
    directory) with `args` and the path it is to write, ``scratch/out``; that path."""
    out = scratch / "out"
    subprocess.run(
        [str(python), "-I", "-S", "-c", script, *map(str, args), str(out)],
        cwd=scratch,
        check=True,
        timeout=COMPILE_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return out


def without(table: Table, source: str) -> bytes:
    """The table with `source`'s entry removed, marshalled."""
    return marshal.dumps({path: entry for path, entry in table.items() if path != source})


_COMPILE_RUNNER = """
import os, py_compile, sys
wire, out, sources = sys.argv[1], sys.argv[-1], sys.argv[2:-1]
os.makedirs(os.path.join(out, "runner"))
py_compile.compile(wire, cfile=os.path.join(out, "wire.pyc"), dfile=wire, doraise=True)
for source in sources:
    name = os.path.splitext(os.path.basename(source))[0] + ".pyc"
    compiled = os.path.join(out, "runner", name)
    py_compile.compile(source, cfile=compiled, dfile=source, doraise=True)
"""


@functools.cache
def compiled_runner(cache: Path, python: Path, entry: Path) -> Path | None:
    """The runner's package (the folder of `entry`, the file the jail starts) compiled by
    `python`, the wire module compiled beside it (where the runner loads it from,
    `wire_beside`), kept in the cache; the compiled entry, or None when compiling fails."""
    try:
        wire = Path(wire_beside(str(entry)))
        sources = sorted(entry.parent.glob("*.py"))
        digest = hashlib.sha256()
        for source in (wire, *sources):
            digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
        folder = cache / "runner" / _key(str(python), str(entry), digest.hexdigest())
        compiled = folder / "runner" / (entry.stem + ".pyc")
        if not compiled.is_file():
            folder.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=folder.parent) as scratch:
                made = _run_in(Path(scratch), python, _COMPILE_RUNNER, wire, *sources)
                with contextlib.suppress(OSError):  # another gen published it first: the same
                    made.rename(folder)
        return compiled if compiled.is_file() else None
    except (OSError, subprocess.SubprocessError):
        return None


def shard_of(path: str) -> int:
    """Which shard a source path's entry is kept in (stable across processes and machines)."""
    return int.from_bytes(hashlib.sha256(path.encode()).digest()[:4], "big") % SHARDS


@functools.cache
def bytecode_table(cache: Path, tree: Path, python: Path, target_path: str) -> tuple[Path, ...]:
    """The table files for jails running `target_path` of `tree`: every shard but the target
    file's, and that one without its entry; none when there are none.

    Built on first use: one compile per tree and interpreter, the shards, then one filtered
    copy per target file.
    """
    real_tree = os.path.realpath(tree)
    source = os.path.join(real_tree, target_path)
    root = cache / "bytecode" / _key(real_tree, str(python), _fingerprint(real_tree))
    own = shard_of(source)
    final = root / "targets" / f"{_key(source)}.marshal"
    try:
        shards = _shards(root, Path(real_tree), python)
        if not final.is_file():
            publish(without(_read(shards[own]) if own in shards else {}, source), final)
        if source in _read(final):
            return ()  # never: the copy was written without it; refuse rather than leak
    except (OSError, ValueError, EOFError, TypeError, subprocess.SubprocessError):
        return ()
    kept = [path for index, path in sorted(shards.items()) if index != own]
    return (*kept, final)


def _shards(root: Path, tree: Path, python: Path) -> dict[int, Path]:
    """The tree's shards by index (only those holding an entry), written from the full table
    on first use."""
    folder = root / "shards"
    listed = folder / "index.marshal"  # the shard indices written: the last file published
    if not listed.is_file():
        full = _read(
            _built(root / "full.marshal", python, _COMPILE, str(tree), str(MAX_FILE_BYTES))
        )
        split: dict[int, Table] = {}
        for path, entry in full.items():
            split.setdefault(shard_of(path), {})[path] = entry
        for index, part in split.items():
            publish(marshal.dumps(part), folder / f"{index}.marshal")
        publish(marshal.dumps(sorted(split)), listed)
    indices = marshal.loads(listed.read_bytes())
    if not isinstance(indices, list) or not all(type(i) is int for i in indices):
        raise ValueError("not a shard index")
    return {index: folder / f"{index}.marshal" for index in indices}


def _read(path: Path) -> Table:
    table = marshal.loads(path.read_bytes())
    if not isinstance(table, dict):
        raise ValueError(f"{path} is not a table")
    return table


# ------------------------------------------- a candidate's file, compiled on the host

# A candidate's run in a session's child imports the target's file, which the host has just
# written: compiling it there is most of a short run's import (1-1.5 ms for a 200-line module,
# 10-20 ms for a large one), twice per candidate that earns anything (its second run is in
# another session).  When the environment's interpreter reads this interpreter's code (the
# same bytecode magic number) the host compiles the file once and ships the code beside it:
# a header (magic, the source's length), the source, the marshalled code.  The runner takes the
# code only when the file it imports holds that very source, and compiles it otherwise.

_MAGIC = """
import importlib.util, sys
sys.stdout.write(importlib.util.MAGIC_NUMBER.hex())
"""


@functools.cache
def same_magic(python: Path) -> bool:
    """Whether `python` reads code this interpreter compiles (asked once per interpreter)."""
    try:
        done = subprocess.run(
            [str(python), "-I", "-S", "-c", _MAGIC],
            capture_output=True,
            timeout=COMPILE_TIMEOUT_S,
            check=True,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.stdout.strip() == MAGIC_NUMBER.hex().encode()


@dataclass(frozen=True)
class Compiled:
    """A candidate's file compiled on the host: its code, or why it has none."""

    code: types.CodeType | None
    problem: str | None  # "line N: message" when it does not compile
    warned: bool  # the compile warned (a SyntaxWarning, say)


@functools.lru_cache(maxsize=8)
def compile_candidate(program: bytes, path: str) -> Compiled:
    """`program` compiled as the jail imports it from `path` (the grader's syntax check and
    the code shipped to a session's child are this one compile, kept for the second run)."""
    try:  # the warnings' filters are the process's: one thread at a time holds them
        with PARSE_LOCK, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = compile(program, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return Compiled(None, f"line {exc.lineno}: {exc.msg}", False)
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:  # null bytes, depth
        return Compiled(None, str(exc) or type(exc).__name__, False)
    return Compiled(code, None, bool(caught))


@functools.lru_cache(maxsize=8)  # a candidate's second run ships the same bytes
def shipped_code(program: bytes, path: str) -> bytes:
    """The code file for `program` imported from `path` in the jail (see above), or b"" when
    it does not compile cleanly (an error or a warning: the child then compiles it and meets
    them as a fresh runner would)."""
    found = compile_candidate(program, path)
    if found.code is None or found.warned:
        return b""
    code = marshal.dumps(found.code)
    return MAGIC_NUMBER + len(program).to_bytes(8, "little") + program + code
