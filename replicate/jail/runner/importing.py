"""Importing the target: the runner's setup (paths, site dirs, the compiled-code table), the
candidate's file compiled (or the host's code for it taken), and a session's programs compiled
once with only their changed statement compiled per child."""

from __future__ import annotations

import bisect
import builtins
import importlib
import importlib.machinery
import random
import re
import sys
import types
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .base import (
    _ALRM,
    _PID,
    _RANDOM_STATE,
    _SIG_BLOCK,
    _SNAPSHOT,
    _addsitedir,
    _getpid,
    _import_module,
    _marshal_loads,
    _module_dict,
    _ModuleType,
    _os_stat,
    _set_int_digits,
    _sigmask,
    _sys_modules,
    _sys_path,
    _type,
)
from .byvalue import _BY_VALUE

if TYPE_CHECKING:
    from .base import wire

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


def _target(module_name: str, qualname: str) -> Callable[..., Any]:
    random.seed(0)  # before the candidate's module runs
    _RANDOM_STATE[:] = [random.getstate()]
    owner: Any = _import_module(module_name)
    *owner_path, name = qualname.split(".")
    for part in owner_path:
        owner = getattr(owner, part)
    return getattr(owner, name)


# ---------------------------------------------------------------- repository code, compiled


_BYTECODE: dict[str, tuple[int, int, bytes]] = {}


class _CompiledLoader(importlib.machinery.SourceFileLoader):
    """A source loader that takes a repository module's code from the host-compiled table
    (replicate.jail.bytecode) while its source's size and mtime match; the candidate's file
    and the target's are never in the table, so they always compile from source."""

    def get_code(self, fullname: str) -> Any:
        entry = _BYTECODE.get(self.path)
        if entry is not None:
            st = _os_stat(self.path)
            if (st.st_size, st.st_mtime_ns) == (entry[0], entry[1]):
                return _marshal_loads(entry[2])
        return super().get_code(fullname)

    def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> Any:  # type: ignore[override]
        plain = _optimize == -1 and _type(data) is bytes
        held = _HELD[0] if _HELD and plain else None
        code = _held_code(held, data, path) if held is not None else None
        if code is None and _SHIPPED and plain and path == _SHIPPED[0]:
            code = _shipped_code(data, _SHIPPED[1])
        return code if code is not None else super().source_to_code(data, path, _optimize=_optimize)


# ------------------------------------------------ a session's programs, compiled once

# Gen's session runs the same target file many times: the original (each golden run, search,
# re-grade) and its mutants and degenerate programs, each differing from the original inside one
# top-level statement.  Compiling the whole file is most of a child's import (12-25 ms for a
# large module).  So the session's runner compiles a program it has been sent twice, once, before
# forking (`_Held.offer`), and a child importing the target's file takes that code when its bytes
# are the same, or compiles only the top-level statement its bytes differ in and puts that into a
# copy of the held module code (`_patched`), checked against the held code's own statement, else
# compiles the file as a fresh runner does.  The code is the file's compile in everything
# `code.__eq__` compares, with two differences no result shows: equal constants of the patched
# statement are other objects than the module's (compile shares them across a module), and the
# module-level instructions of the changed statement keep the original's end line and column.


class _Held:
    """The program a session has been sent most often (at least twice), compiled, with where
    its top-level function and class statements lie."""

    __slots__ = ("code", "counts", "flags", "imported", "lines", "path", "source", "statements")

    def __init__(self) -> None:
        self.counts: dict[int, int] = {}
        self.source = b""
        self.path = ""
        self.code: Any = None
        self.lines: list[bytes] = []
        self.statements: list[tuple[int, int, int]] = []  # (index in co_consts, first, last)
        self.imported = b""  # `import` of the names the module's own imports bind, or nothing
        self.flags = 0  # the module's `__future__` features, for compiling one statement alone

    def offer(self, path: str, source: bytes) -> None:
        """Note a program the session is about to run from `path`; compile it once it is the
        most frequent (best effort: a warning or an error at compile leaves it to the child)."""
        key = hash(source)
        seen = self.counts[key] = self.counts.get(key, 0) + 1
        if len(self.counts) > 4096:
            self.counts = {key: seen}
        if source == self.source or seen < 2 or seen <= self.counts.get(hash(self.source), 0):
            return
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                code = compile(source, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        if not caught:
            self.source, self.path, self.code = source, path, code
            self.lines = source.split(b"\n")
            self.statements = _statements(code, len(self.lines), source)
            self.imported = _imported(source, path)
            self.flags = code.co_flags & _future_flags()


_HELD: list[_Held] = []  # the session's, in the runner of a session only
_SHIPPED: list[str] = []  # a candidates' session: the target's file, the host's code for it


def _shipped_code(data: bytes, code_file: str) -> Any:
    """The host's code for `data` (replicate.jail.bytecode.shipped_code), or None: no file, of
    another interpreter, or of other source."""
    try:
        with open(code_file, "rb") as handle:
            blob = handle.read()
    except OSError:
        return None
    magic = importlib._bootstrap_external.MAGIC_NUMBER
    size = int.from_bytes(blob[4:12], "little")
    if blob[:4] != magic or blob[12 : 12 + size] != data:
        return None
    try:
        return _marshal_loads(blob[12 + size :])
    except (ValueError, EOFError, TypeError):
        return None


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=]")  # an encoding declaration (PEP 263)


def _statements(module: Any, final: int, source: bytes) -> list[tuple[int, int, int]]:
    """Each function or class statement at the top of `module`: its code's index in the
    module's constants, its first line, and the line before the next module-level statement
    (its comments and blank lines with it); none for a file with an encoding mark."""
    head = source.split(b"\n", 2)[:2]
    if source.startswith(b"\xef\xbb\xbf") or any(_CODING.match(line) for line in head):
        return []
    starts = sorted({line for _, _, line in module.co_lines() if line is not None})
    found = []
    for index, const in enumerate(module.co_consts):
        if _type(const) is types.CodeType:
            first, last = _lines_of(const)
            after = bisect.bisect_right(starts, last)  # the next statement's first line
            found.append((index, first, starts[after] - 1 if after < len(starts) else final))
    return found


def _future_flags() -> int:
    """Every `__future__` feature's compiler flag (the session's runner only, not each jail)."""
    import __future__

    flags = 0
    for feature in __future__.all_feature_names:
        flags |= getattr(__future__, feature).compiler_flag
    return flags


def _imported(source: bytes, path: str) -> bytes:
    """One `import` statement binding every name the module's own imports bind: compiled
    before a statement alone, so its functions compile as in the module (a method call on an
    imported module is compiled differently from one on any other name)."""
    import symtable  # the session's runner only, once per program it holds

    try:
        top = symtable.symtable(source.decode("utf-8"), path, "exec")
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return b""
    names = sorted(n for n in top.get_identifiers() if top.lookup(n).is_imported())
    return ("import " + ", ".join(names)).encode("utf-8") if names else b""


def _held_code(held: _Held, data: bytes, path: str) -> Any:
    """The code for `data` from `path` taken from the held program, or None (compile it)."""
    if path != held.path or held.code is None:
        return None
    if data == held.source:
        return held.code
    try:
        return _patched(held, data, path)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None


def _patched(held: _Held, data: bytes, path: str) -> Any:
    """The held module code with the one top-level statement `data` differs in compiled from
    `data`; None unless the difference lies inside one function or class statement whose lines
    are the same in number, and compiling that statement of the held source alone gives the held
    code for it and the same module-level code as `data`'s (but where it ends)."""
    base, module = held.source, held.code
    if data.count(b"\n") != base.count(b"\n"):
        return None
    start = _common_prefix(base, data)
    end = len(base) - _common_prefix(base[start:][::-1], data[start:][::-1])
    first, last = base.count(b"\n", 0, start) + 1, base.count(b"\n", 0, end) + 1
    found = [(n, lo, hi) for n, lo, hi in held.statements if lo <= first and last <= hi]
    if len(found) != 1:
        return None
    index, lo, hi = found[0]
    flags = held.flags
    pad = held.imported + b"\n" * (lo - 1) if held.imported and lo > 1 else b"\n" * (lo - 1)
    old = compile(pad + b"\n".join(held.lines[lo - 1 : hi]), path, "exec", flags, True)
    new = compile(pad + b"\n".join(data.split(b"\n")[lo - 1 : hi]), path, "exec", flags, True)
    at = [n for n, c in enumerate(old.co_consts) if _type(c) is types.CodeType]
    if len(at) != 1 or not _same_code(old.co_consts[at[0]], module.co_consts[index]):
        return None
    j, replaced = at[0], new.co_consts[at[0]] if len(new.co_consts) > at[0] else None
    if _type(replaced) is not types.CodeType:
        return None
    probe = old.replace(co_consts=(*old.co_consts[:j], replaced, *old.co_consts[j + 1 :]))
    if not _same_but_ends(probe, new):
        return None  # the statement's own module-level code differs (a default, a decorator)
    consts = module.co_consts
    return module.replace(co_consts=(*consts[:index], replaced, *consts[index + 1 :]))


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share (by halving: each step one C comparison)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _same_but_ends(a: Any, b: Any) -> bool:
    """Whether two module codes are equal but for where their statements end (a changed
    definition ends at another line and column; only a traceback's marks could show it)."""
    starts = [(p[0], p[2]) for p in a.co_positions()] == [(p[0], p[2]) for p in b.co_positions()]
    return starts and a.replace(co_linetable=b.co_linetable) == b


def _same_code(a: Any, b: Any) -> bool:
    """Whether two code objects are equal, the code they hold compared the same way (`==`
    compares held code objects by identity)."""
    inner_a = [n for n, c in enumerate(a.co_consts) if _type(c) is types.CodeType]
    inner_b = [n for n, c in enumerate(b.co_consts) if _type(c) is types.CodeType]
    if inner_a != inner_b:
        return False
    masked_a = tuple(None if n in inner_a else c for n, c in enumerate(a.co_consts))
    masked_b = tuple(None if n in inner_b else c for n, c in enumerate(b.co_consts))
    if a.replace(co_consts=masked_a) != b.replace(co_consts=masked_b):
        return False
    return all(_same_code(a.co_consts[n], b.co_consts[n]) for n in inner_a)


def _lines_of(code: Any) -> tuple[int, int]:
    """The first and last line of a code object and the code it holds."""
    lines = [line for _, _, line in code.co_lines() if line is not None]
    for inner in code.co_consts:
        if _type(inner) is types.CodeType:
            lines.extend(_lines_of(inner))
    return code.co_firstlineno, max(lines, default=code.co_firstlineno)


def _use_bytecode(table_paths: list[Any], roots: list[str]) -> None:
    """Serve the modules under `roots` from the tables at `table_paths` (best effort)."""
    for path in table_paths:
        try:
            with open(path, "rb") as handle:
                table = _marshal_loads(handle.read())
        except (OSError, ValueError, EOFError, TypeError):
            continue
        if _type(table) is dict:
            _BYTECODE.update(table)
    if not _BYTECODE:
        return
    machinery = importlib.machinery
    finder_for = machinery.FileFinder.path_hook(
        (_CompiledLoader, machinery.SOURCE_SUFFIXES),
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES),
    )
    under = tuple(root.rstrip("/") + "/" for root in roots)

    def hook(entry: str) -> Any:
        if entry in roots or entry.startswith(under):
            return finder_for(entry)
        raise ImportError("not a repository path")

    sys.path_hooks.insert(0, hook)


def _prepare(setup: wire.Setup) -> None:
    _PID[:] = [_getpid()]
    _set_int_digits(0)
    _sigmask(_SIG_BLOCK, _ALRM)
    for name, mod in list(_sys_modules.items()):
        if _type(mod) is _ModuleType:
            _SNAPSHOT[name] = dict(_module_dict(mod))
    roots = [str(p) for p in setup.get("sys_path", ())]
    bytecode = setup.get("bytecode")
    if _type(bytecode) is list:
        _use_bytecode([path for path in bytecode if _type(path) is str], roots)
    _sys_path[0:0] = roots
    for site_dir in setup.get("site_dirs", ()):
        _addsitedir(str(site_dir))
    by_value = setup.get("by_value")
    _BY_VALUE[:] = [by_value] if _type(by_value) is str else []
