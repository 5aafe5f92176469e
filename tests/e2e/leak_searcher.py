"""A red-team agent that hunts for the original bodies of the batch's targets (stdlib only).

`replicate run` starts it inside the sandbox as the agent (it then searches everything from `/`),
and the leak test starts it outside the sandbox over the folders that matter (positive control).

    python leak_searcher.py --needles NEEDLES.json --out REPORT.json [--root PATH]...
                            [--probe PATH]... [--deadline SECONDS]

A needle is one reference body: the `ast.dump` of its statements (docstring dropped, names kept)
and a key of its compiled code (`co_code` and `co_names`), so `.pyc` files match too.  Searched:
every `.py`/`.pyw`/`.pyi` file, every `.pyc`, every member of a zip-like or tar archive (nested
archives one level deep), python-shebang scripts, archives recognised by their magic bytes where
the name says nothing (and archives embedded in files under cache-named folders, as pip's HTTP
cache stores them), and every object of every git object database found (`git cat-file
--batch-all-objects`: loose and packed objects, reflogs and stashes included).

Before parsing, a pure-ASCII text is skipped unless it holds every identifier of some needle:
identifiers survive verbatim in any source that parses to the same tree, so the filter loses
nothing (a non-ASCII text is always parsed).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import io
import json
import marshal
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from types import CodeType
from typing import IO, Any

MAX_SOURCE_BYTES = 5 * 1024 * 1024
MAX_ARCHIVE_BYTES = 256 * 1024 * 1024
MAX_HITS = 2000
MAX_LISTED = 500
SKIP = ("/proc", "/sys", "/dev")
SOURCE_SUFFIXES = (".py", ".pyw", ".pyi")
BYTECODE_SUFFIXES = (".pyc", ".pyo")
ZIP_SUFFIXES = (".whl", ".zip", ".egg", ".pyz", ".jar")
TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".sdist")
ARCHIVE_SUFFIXES = ZIP_SUFFIXES + TAR_SUFFIXES
TOOL_CACHES = ("pip", "uv", "pypoetry", "poetry", "pdm", "pipenv", "wheelhouse", "__pypackages__")
CACHE_NAMES = frozenset((*TOOL_CACHES, "hypothesis", ".hypothesis", ".cache"))
COMPRESSED_MAGIC = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")
ZIP_MAGIC = b"PK\x03\x04"
PYC_MAGIC = importlib.util.MAGIC_NUMBER


def statements(body: Sequence[ast.stmt]) -> list[ast.stmt]:
    """A function body without its docstring."""
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
        return list(body[1:])
    return list(body)


def body_dump(stmts: Sequence[ast.stmt]) -> str:
    """The normalised syntax tree: names and constants kept, positions and comments gone."""
    return "\n".join(ast.dump(s) for s in stmts)


def shape(stmts: Sequence[ast.stmt]) -> tuple[int, str, str]:
    """A cheap summary that equal dumps share (so most bodies need no dump at all)."""
    return (len(stmts), type(stmts[0]).__name__, type(stmts[-1]).__name__)


def code_key(code: CodeType) -> str:
    blob = code.co_code + b"\0" + "\0".join(code.co_names).encode("utf-8", "surrogatepass")
    return hashlib.sha256(blob).hexdigest()


def functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function definition anywhere in `tree`, with its qualified name."""
    stack: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
    while stack:
        body, prefix = stack.pop()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield prefix + node.name, node
                stack.append((node.body, f"{prefix}{node.name}.<locals>."))
            elif isinstance(node, ast.ClassDef):
                stack.append((node.body, f"{prefix}{node.name}."))
            else:
                for name in ("body", "orelse", "finalbody"):
                    sub = getattr(node, name, None)
                    if isinstance(sub, list):
                        stack.append((sub, prefix))
                for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
                    stack.append((part.body, prefix))


def code_objects(code: CodeType) -> Iterator[CodeType]:
    stack = [code]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(c for c in current.co_consts if isinstance(c, CodeType))


@dataclass(frozen=True)
class Hit:
    needle: str  # task id
    kind: str  # py, pyc, archive-py, archive-pyc, git-blob, git-archive-py ...
    where: str
    symbol: str


@dataclass
class Needles:
    dumps: dict[str, list[str]]
    shapes: set[tuple[int, str, str]]
    code_keys: dict[str, list[str]]
    tokens: list[tuple[bytes, ...]]

    @classmethod
    def load(cls, path: str) -> Needles:
        with open(path, encoding="utf-8") as handle:
            items = json.load(handle)["needles"]
        dumps: dict[str, list[str]] = {}
        keys: dict[str, list[str]] = {}
        for item in items:
            dumps.setdefault(item["dump"], []).append(item["task_id"])
            if item.get("code_key"):
                keys.setdefault(item["code_key"], []).append(item["task_id"])
        return cls(
            dumps=dumps,
            shapes={(int(n), str(a), str(b)) for n, a, b in (i["shape"] for i in items)},
            code_keys=keys,
            tokens=[tuple(t.encode() for t in item["tokens"]) for item in items],
        )

    def may_hold(self, data: bytes) -> bool:
        if not data.isascii():
            return True
        return any(all(t in data for t in tokens) for tokens in self.tokens)


@dataclass
class Search:
    needles: Needles
    deadline: float
    counts: Counter[str] = field(default_factory=Counter)
    hits: list[Hit] = field(default_factory=list)
    git_dirs: list[str] = field(default_factory=list)
    cache_dirs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cut_short: bool = False
    seen_dirs: set[tuple[int, int]] = field(default_factory=set)

    def time_up(self) -> bool:
        if time.monotonic() > self.deadline:
            self.cut_short = True
        return self.cut_short

    def hit(self, needles: list[str], kind: str, where: str, symbol: str) -> None:
        self.counts["hits"] += len(needles)
        for needle in needles:
            if len(self.hits) < MAX_HITS:
                self.hits.append(Hit(needle, kind, where, symbol))

    def error(self, where: str, exc: BaseException) -> None:
        self.counts["errors"] += 1
        if len(self.errors) < MAX_LISTED:
            self.errors.append(f"{where}: {type(exc).__name__}: {exc}"[:300])

    # --- contents -------------------------------------------------------------------------------

    def source(self, data: bytes, where: str, kind: str) -> None:
        self.counts[f"{kind}_files"] += 1
        if not self.needles.may_hold(data):
            return
        self.counts[f"{kind}_parsed"] += 1
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            self.counts[f"{kind}_unparseable"] += 1
            return
        for qualname, node in functions(tree):
            stmts = statements(node.body)
            if stmts and shape(stmts) in self.needles.shapes:
                found = self.needles.dumps.get(body_dump(stmts))
                if found:
                    self.hit(found, kind, where, qualname)

    def bytecode(self, data: bytes, where: str, kind: str) -> None:
        self.counts[f"{kind}_files"] += 1
        if data[:4] != PYC_MAGIC:
            self.counts[f"{kind}_other_version"] += 1
            return
        try:
            module = marshal.loads(data[16:])
        except (ValueError, EOFError, TypeError) as exc:
            self.error(where, exc)
            return
        if not isinstance(module, CodeType):
            return
        for code in code_objects(module):
            found = self.needles.code_keys.get(code_key(code))
            if found:
                self.hit(found, kind, where, code.co_qualname)

    def blob(self, data: bytes, where: str, kind: str, depth: int) -> None:
        """Bytes of unknown nature: a .pyc, an archive, or else Python source."""
        if data[:4] == PYC_MAGIC:
            self.bytecode(data, where, f"{kind}-pyc")
        elif depth < 2 and (data[:4] == ZIP_MAGIC or data.startswith(COMPRESSED_MAGIC)):
            self.archive(io.BytesIO(data), where, f"{kind}-archive", depth + 1, zipped=None)
        else:
            self.source(data, where, f"{kind}-py")

    # --- archives -------------------------------------------------------------------------------

    def archive(
        self, src: str | IO[bytes], where: str, kind: str, depth: int, zipped: bool | None
    ) -> None:
        """Scan a zip or tar archive (`zipped` None: decide by content)."""
        if zipped is None:
            zipped = zipfile.is_zipfile(src)
            if not isinstance(src, str):
                src.seek(0)
        try:
            members = self._zip_members(src) if zipped else self._tar_members(src)
            self.counts[f"{kind}s"] += 1
            for name, size, read in members:
                if self.time_up():
                    return
                self.member(name, size, read, f"{where}!{name}", kind, depth)
        except Exception as exc:  # noqa: BLE001 - a broken archive is counted, the search goes on
            self.error(where, exc)

    def member(
        self, name: str, size: int, read: Callable[[], bytes], where: str, kind: str, depth: int
    ) -> None:
        lower = name.lower()
        self.counts[f"{kind}_members"] += 1
        if lower.endswith(SOURCE_SUFFIXES) and size <= MAX_SOURCE_BYTES:
            self.source(read(), where, f"{kind}-py")
        elif lower.endswith(BYTECODE_SUFFIXES) and size <= MAX_SOURCE_BYTES:
            self.bytecode(read(), where, f"{kind}-pyc")
        elif depth < 1 and size <= MAX_ARCHIVE_BYTES and lower.endswith(ARCHIVE_SUFFIXES):
            zipped = lower.endswith(ZIP_SUFFIXES)
            self.archive(io.BytesIO(read()), where, "nested", depth + 1, zipped)

    @staticmethod
    def _zip_members(src: str | IO[bytes]) -> Iterator[tuple[str, int, Callable[[], bytes]]]:
        with zipfile.ZipFile(src) as archive:
            for info in archive.infolist():
                if not info.is_dir():
                    yield info.filename, info.file_size, _reader(archive.read, info)

    @staticmethod
    def _tar_members(src: str | IO[bytes]) -> Iterator[tuple[str, int, Callable[[], bytes]]]:
        path, handle = (src, None) if isinstance(src, str) else (None, src)
        with tarfile.open(path, "r:*", fileobj=handle) as archive:
            for info in archive:
                if info.isfile():
                    yield info.name, info.size, _reader(_extract(archive), info)

    # --- git ------------------------------------------------------------------------------------

    def git(self, gitdir: str) -> None:
        """Every object of the database at `gitdir`; blobs are checked like files."""
        if gitdir in self.git_dirs:
            return
        self.git_dirs.append(gitdir)
        argv = ["git", "-c", "safe.directory=*", "--git-dir", gitdir, "cat-file",
                "--batch-all-objects", "--batch", "--unordered"]  # fmt: skip
        with tempfile.TemporaryFile() as stderr:
            try:
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr)
            except OSError as exc:
                self.error(gitdir, exc)
                return
            assert proc.stdout is not None
            with proc:
                for oid, kind, data in _git_objects(proc.stdout):
                    self.counts["git_objects"] += 1
                    self.counts[f"git_{kind}s"] += 1
                    if kind == "blob" and data is not None:
                        self.blob(data, f"{gitdir}@{oid}", "git", depth=0)
                    if self.time_up():
                        proc.kill()
                        break
            if proc.returncode not in (0, -9):
                stderr.seek(0)
                message = stderr.read()[-300:].decode("utf-8", "replace")
                self.errors.append(f"{gitdir}: git exited {proc.returncode}: {message}")

    # --- the file system ------------------------------------------------------------------------

    def walk(self, root: str) -> None:
        if os.path.isfile(root):
            self.file(root, os.path.basename(root))
            return
        stack = [root]
        while stack and not self.time_up():
            folder = stack.pop()
            try:
                info = os.stat(folder, follow_symlinks=False)
                if (info.st_dev, info.st_ino) in self.seen_dirs:
                    continue
                self.seen_dirs.add((info.st_dev, info.st_ino))
                entries = list(os.scandir(folder))
            except OSError as exc:
                self.error(folder, exc)
                continue
            self.counts["dirs"] += 1
            stack.extend(self.folder(folder, entries))

    def folder(self, folder: str, entries: list[os.DirEntry[str]]) -> list[str]:
        """Handle one folder's entries; return its subfolders to walk."""
        names = {e.name for e in entries}
        if "HEAD" in names and "objects" in names and os.path.isdir(f"{folder}/objects"):
            self.git(folder)
        subfolders = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in SKIP:
                        subfolders.append(entry.path)
                    if entry.name.lower() in CACHE_NAMES and len(self.cache_dirs) < MAX_LISTED:
                        self.cache_dirs.append(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    self.file(entry.path, entry.name)
                elif entry.is_symlink():
                    self.counts["symlinks"] += 1
            except OSError as exc:
                self.error(entry.path, exc)
        return subfolders

    def file(self, path: str, name: str) -> None:
        lower = name.lower()
        if name == ".git":
            self._gitfile(path)
        elif lower.endswith(SOURCE_SUFFIXES + BYTECODE_SUFFIXES):
            data = _read(path, MAX_SOURCE_BYTES)
            if data is not None and lower.endswith(BYTECODE_SUFFIXES):
                self.bytecode(data, path, "pyc")
            elif data is not None:
                self.source(data, path, "py")
        elif lower.endswith(ARCHIVE_SUFFIXES):
            if os.path.getsize(path) <= MAX_ARCHIVE_BYTES:
                self.archive(path, path, "archive", 0, zipped=lower.endswith(ZIP_SUFFIXES))
        elif lower.endswith(".py.gz"):
            self.archive_source(path)
        elif "." not in name or _in_cache(path):
            self.sniff(path)

    def sniff(self, path: str) -> None:
        """A file whose name says nothing: a python script, an archive, or a cached download."""
        with open(path, "rb") as handle:
            head = handle.read(512)
        self.counts["sniffed"] += 1
        if head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]:
            data = _read(path, MAX_SOURCE_BYTES)
            if data is not None:
                self.source(data, path, "script")
        elif head[:4] == PYC_MAGIC:
            data = _read(path, MAX_SOURCE_BYTES)
            if data is not None:
                self.bytecode(data, path, "pyc")
        elif head.startswith((ZIP_MAGIC, *COMPRESSED_MAGIC)) or _in_cache(path):
            self.embedded(path)

    def embedded(self, path: str) -> None:
        """A zip anywhere in the file (zipfile finds it from the end), or a compressed tar."""
        data = _read(path, MAX_ARCHIVE_BYTES)
        if data is None:
            return
        if zipfile.is_zipfile(io.BytesIO(data)):
            self.archive(io.BytesIO(data), path, "sniffed", 0, zipped=True)
            return
        for magic in COMPRESSED_MAGIC:
            start = data.find(magic)
            if start >= 0 and _is_tar(data[start:]):
                self.archive(io.BytesIO(data[start:]), f"{path}@{start}", "sniffed", 0, False)
                return

    def archive_source(self, path: str) -> None:
        import gzip

        try:
            with gzip.open(path, "rb") as handle:
                data = handle.read(MAX_SOURCE_BYTES + 1)
        except (OSError, EOFError) as exc:
            self.error(path, exc)
            return
        if len(data) <= MAX_SOURCE_BYTES:
            self.source(data, path, "gz-py")

    def _gitfile(self, path: str) -> None:
        """A `.git` file (worktree, submodule) points at an object database elsewhere."""
        data = _read(path, 4096) or b""
        if data.startswith(b"gitdir:"):
            target = data[7:].strip().decode("utf-8", "replace")
            target = os.path.normpath(os.path.join(os.path.dirname(path), target))
            if os.path.isdir(os.path.join(target, "objects")):
                self.git(target)
            common = os.path.join(target, "commondir")
            if os.path.isfile(common):
                shared = (_read(common, 4096) or b"").strip().decode("utf-8", "replace")
                self.git(os.path.normpath(os.path.join(target, shared)))


def _reader(read: Callable[[Any], bytes | None], info: Any) -> Callable[[], bytes]:
    return lambda: read(info) or b""


def _extract(archive: tarfile.TarFile) -> Callable[[tarfile.TarInfo], bytes | None]:
    def read(info: tarfile.TarInfo) -> bytes | None:
        handle = archive.extractfile(info)
        return handle.read() if handle is not None else None

    return read


def _is_tar(data: bytes) -> bool:
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            return archive.next() is not None
    except (tarfile.TarError, OSError, EOFError, ValueError):
        return False


def _in_cache(path: str) -> bool:
    return any(part.lower() in CACHE_NAMES for part in path.split("/"))


def _read(path: str, limit: int) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None


def _git_objects(stream: IO[bytes]) -> Iterator[tuple[str, str, bytes | None]]:
    """Parse `git cat-file --batch` output; contents above the size cap are skipped."""
    while True:
        header = stream.readline()
        if not header:
            return
        oid, kind, size_text = header.decode().split()[:3]
        size = int(size_text)
        data: bytes | None = None
        if size <= MAX_SOURCE_BYTES:
            data = stream.read(size)
        else:
            while size > 0:
                size -= len(stream.read(min(1 << 20, size))) or size
        stream.read(1)
        yield oid, kind, data


def probe(path: str) -> dict[str, Any]:
    """What the searcher can tell about one path named by the caller."""
    out: dict[str, Any] = {"exists": os.path.lexists(path)}
    if os.path.isdir(path):
        try:
            out["entries"] = sorted(os.listdir(path))[:50]
        except OSError as exc:
            out["error"] = str(exc)
    elif os.path.isfile(path):
        try:
            with open(path, "rb") as handle:
                out["readable"] = bool(handle.read(1)) or True
        except OSError:
            out["readable"] = False
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--needles", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--root", action="append", default=[])
    parser.add_argument("--probe", action="append", default=[])
    parser.add_argument("--deadline", type=float, default=600.0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    search = Search(Needles.load(args.needles), deadline=started + args.deadline)
    roots = args.root or ["/"]
    for root in roots:
        search.walk(root)
    report = {
        "finished": not search.cut_short,
        "elapsed_s": round(time.monotonic() - started, 1),
        "deadline_s": args.deadline,
        "roots": roots,
        "visible_roots": sorted(os.listdir("/")),
        "python": sys.executable,
        "version": sys.version,
        "environment": {k: v for k, v in os.environ.items() if k.startswith("REPLICATE_")},
        "counts": dict(sorted(search.counts.items())),
        "hit_count": search.counts["hits"],
        "hits": [asdict(h) for h in search.hits],
        "git_dirs": search.git_dirs,
        "cache_dirs": search.cache_dirs,
        "probes": {path: probe(path) for path in args.probe},
        "errors": search.errors,
    }
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=1)
    print(json.dumps({k: report[k] for k in ("finished", "elapsed_s", "hit_count", "counts")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
