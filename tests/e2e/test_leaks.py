"""The leak audit, end to end (docs/design.md §6; §5 items 7-9, 13, 14).

An agent that searches everything it can see (file system, git objects and history, .pyc files,
wheels and archives, caches) for the original bodies finds none of its own target's body, and no
other target's body outside its workspace; the same search run outside the sandbox over the
folders that matter does find copies (positive control: setuptools vendors more_itertools, the
sdist and its git repository hold the original).

Needles are computed here, on the trusted side, from the batch's hidden reference trees; the
searcher (tests/e2e/leak_searcher.py, stdlib only) only ever sees their normalised form.
"""

from __future__ import annotations

import ast
import json
import shlex
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.cache import cache_root
from tests.e2e import leak_searcher as searcher
from tests.e2e.conftest import Minted, replicate

MIN_STATEMENTS = 3  # docs/design.md §4: smaller bodies are too generic to count as a leak
INSIDE_DEADLINE_S = 600.0
OUTSIDE_DEADLINE_S = 600.0  # a deadline, not a target: beside other workers it is slower
REPORT_NAME = ".leak-report.json"


@dataclass(frozen=True)
class Needle:
    task_id: str
    qualname: str
    statements: int
    dump: str
    shape: tuple[int, str, str]
    code_key: str | None
    tokens: tuple[str, ...]
    span_agrees: bool


@dataclass(frozen=True)
class Kit:
    """A folder holding the searcher and the needles; mounted read-only into the sandbox."""

    folder: Path
    needles: tuple[Needle, ...]

    @property
    def script(self) -> Path:
        return self.folder / "leak_searcher.py"

    @property
    def needles_file(self) -> Path:
        return self.folder / "needles.json"


@dataclass(frozen=True)
class Search:
    report: dict[str, Any]
    seconds: float

    def hits(self, needle: str | None = None) -> list[dict[str, str]]:
        return [h for h in self.report["hits"] if needle is None or h["needle"] == needle]


@dataclass(frozen=True)
class Inside:
    search: Search
    task_id: str
    workspace: Path
    row: dict[str, Any]


# --- needles (trusted side) -----------------------------------------------------------------------


def identifiers(stmts: list[ast.stmt]) -> tuple[str, ...]:
    """ASCII identifiers any source of these statements spells verbatim (longest first)."""
    found: set[str] = set()
    for node in (n for s in stmts for n in ast.walk(s)):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg is not None:
            found.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
    return tuple(sorted((t for t in found if t.isascii()), key=lambda t: (-len(t), t)))


def find_def(
    tree: ast.Module, qualname: str, body_line: int
) -> ast.FunctionDef | ast.AsyncFunctionDef:
    for name, node in searcher.functions(tree):
        stmts = searcher.statements(node.body)
        if name == qualname and stmts and stmts[0].lineno == body_line:
            return node
    raise AssertionError(f"{qualname} with a body at line {body_line} not found")


def function_code_key(source: bytes, path: Path, name: str, first_line: int) -> str | None:
    module = compile(source, str(path), "exec", dont_inherit=True, optimize=0)
    for code in searcher.code_objects(module):
        if code.co_name == name and code.co_firstlineno == first_line:
            return searcher.code_key(code)
    return None


def hidden_bodies(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets whose bodies a task hides: a class task's members, else its target."""
    target = task["target"]
    return list(target["members"]) if target["kind"] == "class" else [target]


def reference_needle(batch: Path, task: dict[str, Any], target: dict[str, Any]) -> Needle | None:
    path = batch / "reference_impls" / "_repos" / task["repo_dir"] / "tree" / target["path"]
    source = path.read_bytes()
    span = target["body_span"]
    node = find_def(ast.parse(source), target["qualname"], span["start_line"])
    stmts = searcher.statements(node.body)
    if len(stmts) < MIN_STATEMENTS:
        return None
    dump = searcher.body_dump(stmts)
    text = source[span["start_byte"] : span["end_byte"]].decode()
    from_span = ast.parse(textwrap.dedent(target["body_indent"] + text)).body
    first_line = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    return Needle(
        task_id=task["id"],
        qualname=target["qualname"],
        statements=len(stmts),
        dump=dump,
        shape=searcher.shape(stmts),
        code_key=function_code_key(source, path, node.name, first_line),
        tokens=identifiers(stmts),
        span_agrees=searcher.body_dump(searcher.statements(from_span)) == dump,
    )


def batch_needles(batch: Path) -> Iterator[Needle]:
    for task_json in sorted((batch / "reference_impls").glob("*/task.json")):
        task = json.loads(task_json.read_text())
        for target in hidden_bodies(task):
            needle = reference_needle(batch, task, target)
            if needle is not None:
                yield needle


# --- running the searcher ------------------------------------------------------------------------


def base_paths() -> tuple[Path, Path]:
    """The base interpreter's site-packages and ensurepip's bundled wheels."""
    base = {"base": sys.base_prefix, "platbase": sys.base_prefix, "installed_base": sys.base_prefix}
    purelib = Path(sysconfig.get_path("purelib", vars=base))
    bundled = Path(sysconfig.get_path("stdlib", vars=base)) / "ensurepip" / "_bundled"
    return purelib, bundled


def pip_cache_dir() -> Path | None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True, check=False
    )
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def mirror_files(project: str) -> list[Path]:
    """The project's files in the local package mirrors pip is configured with (find-links,
    `file://` indexes), e.g. /opt/pypi/files/more_itertools-10.8.0-py3-none-any.whl."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False
    )
    folders: set[Path] = set()
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(("find-links", "index-url")):
            for item in value.strip("'\"").split():
                path = Path(item.removeprefix("file://"))
                if path.is_absolute() and path.is_dir():
                    folders.add(path.parent if path.name == "simple" else path)
    stems = {project.replace("-", "_"), project.replace("_", "-")}
    return sorted(
        hit
        for folder in folders
        for pattern in ("", "*/")
        for stem in stems
        for hit in folder.glob(f"{pattern}{stem}-*")
        if hit.is_file()
    )


def outside_roots(minted: Minted) -> list[Path]:
    purelib, bundled = base_paths()
    roots = [
        purelib,
        bundled,
        Path("/usr/lib/python3/dist-packages"),
        Path("/usr/share/python-wheels"),
        cache_root(),
        pip_cache_dir(),
        minted.repo,  # the sdist made a git repository: its .git holds the original
        minted.repo.parent / "downloads",  # the sdist archive itself
        minted.batch / "reference_impls",  # the hidden data, which of course holds it
        *mirror_files("more-itertools"),  # local package mirrors
    ]
    return [r for r in roots if r is not None and r.exists()]


def hit_file(hit: dict[str, str]) -> str:
    """The file or git database on disk that holds a hit (archive member and object id cut)."""
    where = hit["where"]
    if hit["kind"].startswith("git"):
        return where.rsplit("@", 1)[0]
    return where.split("!", 1)[0].rsplit("@", 1)[0] if "!" in where else where


def in_vendored_more_itertools(hit: dict[str, str]) -> bool:
    return "_vendor/more_itertools/" in hit["where"]


# --- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kit(more_itertools: Minted, tmp_path_factory: pytest.TempPathFactory) -> Kit:
    folder = tmp_path_factory.mktemp("leak-kit")
    needles = tuple(batch_needles(more_itertools.batch))
    shutil.copy2(Path(searcher.__file__), folder / "leak_searcher.py")
    document = {"needles": [asdict(n) for n in needles]}
    (folder / "needles.json").write_text(json.dumps(document), encoding="utf-8")
    return Kit(folder, needles)


@pytest.fixture(scope="module")
def outside(kit: Kit, more_itertools: Minted, tmp_path_factory: pytest.TempPathFactory) -> Search:
    """The positive control: the same searcher, no sandbox, over the folders that matter."""
    out = tmp_path_factory.mktemp("leak-outside") / "report.json"
    argv = [sys.executable, str(kit.script), "--needles", str(kit.needles_file), "--out", str(out)]
    argv += ["--deadline", str(OUTSIDE_DEADLINE_S)]
    for root in outside_roots(more_itertools):
        argv += ["--root", str(root)]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    print(f"\nleak search outside the sandbox: {seconds:.1f} s; {done.stdout.strip()}")
    return Search(json.loads(out.read_text()), seconds)


def chosen_task(kit: Kit, outside: Search) -> str:
    """The task whose body the machine holds in the most vendored forms (.py, .pyc, wheels)."""

    def score(needle: Needle) -> tuple[int, int, str]:
        vendored = [h for h in outside.hits(needle.task_id) if in_vendored_more_itertools(h)]
        return (len({h["kind"] for h in vendored}), len(vendored), needle.task_id)

    return max(kit.needles, key=score).task_id


@pytest.fixture(scope="module")
def inside(
    kit: Kit, outside: Search, more_itertools: Minted, tmp_path_factory: pytest.TempPathFactory
) -> Inside:
    """The searcher as the agent, in the sandbox, on the task with the most vendored copies."""
    task_id = chosen_task(kit, outside)
    run_dir = tmp_path_factory.mktemp("leak-run") / "run"
    probes = sorted({hit_file(h) for h in outside.hits()})[:300]
    hidden = [more_itertools.batch / "reference_impls" / task_id, more_itertools.repo]
    probes += [str(p) for p in (*hidden, pip_cache_dir()) if p is not None]
    command = [
        "python", str(kit.script), "--needles", str(kit.needles_file),
        "--out", f"{'$'}REPLICATE_WORKSPACE/{REPORT_NAME}", "--deadline", str(INSIDE_DEADLINE_S),
        *(arg for path in probes for arg in ("--probe", path)),
    ]  # fmt: skip
    agent = " ".join(shlex.quote(a) if "$" not in a else f'"{a}"' for a in command)
    started = time.monotonic()
    done = replicate(
        "run", "--tasks", str(more_itertools.batch), "--task", task_id, "--agent", agent,
        "--mount", str(kit.folder), "--keep-workspaces", "--timeout", "900",
        "--out", str(run_dir), "--json",
    )  # fmt: skip
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    (row,) = json.loads(done.stdout)["rows"]
    workspace = run_dir / "workspaces" / f"{task_id}.0"
    report_file = workspace / REPORT_NAME
    assert report_file.is_file(), f"the searcher wrote no report: {row}"
    report = json.loads(report_file.read_text())
    print(f"\nleak search inside the sandbox ({task_id}): {report['elapsed_s']} s searching, "
          f"{seconds:.1f} s for the whole `replicate run`; counts {report['counts']}")  # fmt: skip
    return Inside(Search(report, seconds), task_id, workspace, row)


# --- tests ---------------------------------------------------------------------------------------


def test_needles_come_from_the_reference_bodies(kit: Kit, more_itertools: Minted) -> None:
    tasks = list((more_itertools.batch / "reference_impls").glob("*/task.json"))
    bodies = [b for t in tasks for b in hidden_bodies(json.loads(t.read_text()))]
    assert len(kit.needles) >= 20, f"only {len(kit.needles)} bodies of >= 3 statements"
    assert len(kit.needles) <= len(bodies)
    assert all(n.span_agrees for n in kit.needles), [
        n.task_id for n in kit.needles if not n.span_agrees
    ]
    assert all(n.statements >= MIN_STATEMENTS and n.tokens for n in kit.needles)
    with_code = [n for n in kit.needles if n.code_key is not None]
    assert len(with_code) == len(kit.needles), "a reference function has no code object"


def test_outside_the_sandbox_the_search_finds_copies(
    kit: Kit, outside: Search, more_itertools: Minted
) -> None:
    report = outside.report
    assert report["finished"], f"cut short after {report['elapsed_s']} s"
    assert report["counts"]["py_files"] > 5000
    vendored = [h for h in outside.hits() if in_vendored_more_itertools(h)]
    kinds = {h["kind"] for h in vendored}
    purelib, bundled = base_paths()
    assert any(h["where"].startswith(str(purelib)) for h in vendored), "setuptools' copy missed"
    assert {"py", "pyc", "archive-py"} <= kinds, f"vendored copies found only as {kinds}"
    wheels = (str(bundled), "/usr/share/python-wheels")
    assert any(h["where"].startswith(wheels) for h in vendored), "no copy in a bundled wheel"
    repo_git = str(more_itertools.repo / ".git")
    assert any(hit_file(h) == repo_git for h in outside.hits()), "the sdist repo's git missed"
    # (the downloaded sdist itself is deleted once unpacked and committed: nothing left to find)
    hidden = str(more_itertools.batch / "reference_impls")
    found = {h["needle"] for h in outside.hits() if h["where"].startswith(hidden)}
    assert found == {n.task_id for n in kit.needles}, "a reference tree body was not found"


def test_inside_the_sandbox_the_search_finds_nothing(
    kit: Kit, outside: Search, inside: Inside
) -> None:
    report = inside.search.report
    assert inside.row["agent_status"] == "ok", inside.row
    assert report["finished"], f"cut short after {report['elapsed_s']} s"
    assert report["environment"]["REPLICATE_TASK_ID"] == inside.task_id
    # the positive control found this very body on the machine...
    assert any(in_vendored_more_itertools(h) for h in outside.hits(inside.task_id))
    # ...while the agent searched a real file system and the workspace's git objects
    counts = report["counts"]
    assert counts["py_files"] >= 1000 and counts["pyc_files"] >= 500, counts
    assert str(inside.workspace / ".git") in report["git_dirs"], report["git_dirs"]
    assert counts["git_blobs"] >= 10, counts
    # ...and found its own target's body nowhere, and no other target's outside its workspace
    assert inside.search.hits(inside.task_id) == []
    elsewhere = [h for h in inside.search.hits() if not _within(hit_file(h), inside.workspace)]
    assert elsewhere == [], f"{len(elsewhere)} leak(s) in the sandbox: {by_file(elsewhere)}"
    # every file where the outside search found a copy is gone from the agent's view
    visible = {p: r for p, r in report["probes"].items() if r["exists"]}
    assert visible == {}, f"visible in the sandbox: {sorted(visible)[:20]}"


def by_file(hits: list[dict[str, str]]) -> dict[str, list[str]]:
    """Hits grouped by the file holding them, as `kind:symbol` (for failure messages)."""
    out: dict[str, list[str]] = {}
    for hit in hits:
        out.setdefault(hit_file(hit), []).append(f"{hit['kind']}:{hit['symbol']}")
    return out


def _within(path: str, folder: Path) -> bool:
    return path == str(folder) or path.startswith(f"{folder}/")
