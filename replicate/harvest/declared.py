"""Where a repository says its tests are, read (never run) from its own files.

pytest is handed explicit paths by the harvest, and then ignores the repository's `testpaths`;
tests kept in a folder with another name, in a root-level module (`test.py`, `test_x.py`), in a
package's `tests.py` or `test.py` (unittest's discovery runs them; pytest's names miss them), or
named only by the command the repository's tox, nox, Makefile or CI runs, were never collected.
This module reads those declarations and returns the repository-relative paths they name that
exist in the tree (plain files and folders inside it; nothing that leaves it), each with where it
was declared, so the harvest can hand them to pytest — still under the recording plugin, in the
sandbox. Nothing here executes repository code: commands are split with `shlex` and read.
"""

from __future__ import annotations

import configparser
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

MAX_CONFIG_BYTES = 1_000_000  # a declaration file larger than this is not read
ROOT_TEST_MODULE = re.compile(r"^(test_\w+|\w+_test|tests?)\.py$")  # pytest's names, test(s).py
PACKAGE_TEST_MODULES = ("test.py", "tests.py")
PACKAGE_TEST_SOURCE = "a package's test module"
PYTEST_PYTHON_FILES = ("test_*.py", "*_test.py")  # pytest's default `python_files`
PACKAGE_DEPTH = 3  # a package's test modules are looked for this many package levels down
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")  # `tests.test_x` for unittest
NOT_TESTS = ("setup.py",)  # `python setup.py install` in a CI step runs no test module
RUNNERS = ("pytest", "py.test", "nosetests", "nose2", "unittest", "trial")
PYTHON = re.compile(r"^(python[0-9.]*|pypy[0-9.]*|\{envpython\}|\$\{?PYTHON\}?|coverage)$")


@dataclass(frozen=True)
class DeclaredPath:
    """A repository-relative path to collect tests from, and where the repository names it."""

    path: str
    source: str  # e.g. "tox.ini commands", "pyproject.toml testpaths", "a root-level module"


def declared_tests(tree: Path, source_roots: Sequence[str]) -> tuple[DeclaredPath, ...]:
    """Every test path the repository declares, first declaration first, each path once."""
    found: dict[str, DeclaredPath] = {}
    for candidate in (
        *_configured_testpaths(tree),
        *_command_paths(tree),
        *_root_test_modules(tree, source_roots),
    ):
        found.setdefault(candidate.path, candidate)
    return tuple(found.values())


def _root_test_modules(tree: Path, source_roots: Sequence[str]) -> Iterator[DeclaredPath]:
    for root in dict.fromkeys((".", *source_roots)):
        base = tree / root
        for child in sorted(base.iterdir()) if _inside(tree, base) and base.is_dir() else []:
            if ROOT_TEST_MODULE.match(child.name) and _plain_file(child):
                yield DeclaredPath(_relative(tree, child), "a root-level test module")
            elif _package(child):
                yield from _package_test_modules(tree, child, PACKAGE_DEPTH)


def _package_test_modules(tree: Path, package: Path, depth: int) -> Iterator[DeclaredPath]:
    """`test.py` and `tests.py` in a package and its subpackages: unittest's discovery
    (`python -m unittest`) runs them, pytest's names miss them (`titlecase/tests.py`)."""
    for child in sorted(package.iterdir()):
        if child.name in PACKAGE_TEST_MODULES and _plain_file(child):
            yield DeclaredPath(_relative(tree, child), PACKAGE_TEST_SOURCE)
        elif depth > 1 and _package(child):
            yield from _package_test_modules(tree, child, depth - 1)


def _package(path: Path) -> bool:
    return (
        path.is_dir()
        and not path.is_symlink()
        and path.name.isidentifier()
        and (path / "__init__.py").is_file()
    )


def _configured_testpaths(tree: Path) -> Iterator[DeclaredPath]:
    for name, paths in _pytest_settings(tree, "testpaths"):
        yield from _existing(tree, paths, f"{name} testpaths")


def python_files(tree: Path, found: Sequence[DeclaredPath]) -> tuple[str, ...]:
    """The `python_files` patterns to run pytest with where `found` holds a package's test
    module: the repository's own (pytest's default where it sets none) and `test.py`,
    `tests.py`. pytest 8 folds a file argument into a folder argument holding it (the package,
    handed for its doctests), where its patterns miss the file: the patterns bring it back.
    Empty (pytest's own) otherwise."""
    if not any(d.source == PACKAGE_TEST_SOURCE for d in found):
        return ()
    configured = [patterns for _, patterns in _pytest_settings(tree, "python_files")]
    own = configured[0] if configured else list(PYTEST_PYTHON_FILES)
    return tuple(dict.fromkeys([*own, *PACKAGE_TEST_MODULES]))


def _pytest_settings(tree: Path, key: str) -> Iterator[tuple[str, list[str]]]:
    """A pytest ini setting (a list of words) in each file the repository sets it in, in the
    order pytest looks for them."""
    pyproject = _read(tree / "pyproject.toml")
    if pyproject:
        try:
            options = tomllib.loads(pyproject).get("tool", {}).get("pytest", {})
        except tomllib.TOMLDecodeError:
            options = {}
        value = options.get("ini_options", {}).get(key, []) if options else []
        if isinstance(value, str):
            value = value.split()
        if isinstance(value, list) and value:
            yield "pyproject.toml", [str(p) for p in value]
    for name, section in (
        ("pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        text = _ini_value(tree / name, section, key)
        if text.split():
            yield name, text.split()


def _command_paths(tree: Path) -> Iterator[DeclaredPath]:
    for name, lines in (
        ("tox.ini commands", _tox_commands(tree)),
        ("noxfile.py session", _nox_commands(tree)),
        ("Makefile test target", _make_commands(tree)),
        ("CI workflow step", _workflow_commands(tree)),
    ):
        for line in lines:
            yield from _existing(tree, _runner_paths(line), name)
    suite = _ini_value(tree / "setup.cfg", "options", "test_suite")
    if suite:
        dotted = suite.strip().replace(".", "/")
        yield from _existing(tree, [dotted, f"{dotted}.py"], "setup.cfg test_suite")


def _runner_paths(line: str) -> list[str]:
    """The path arguments of a test runner's command line (`pytest t/`, `python -m unittest
    discover -s tests`, `python test.py`, `coverage run -m pytest tests`), else none."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return []
    for start, word in enumerate(words):
        name = PurePosixPath(word).name
        if name in RUNNERS or (
            word == "-m" and start + 1 < len(words) and words[start + 1] in RUNNERS
        ):
            return _path_arguments(words[start + 1 :])
        if PYTHON.match(name):
            rest = [w for w in words[start + 1 :] if w != "run" and not w.startswith("-")]
            script = rest[0] if rest else ""
            if script.endswith(".py") and "-m" not in words[start + 1 : start + 3]:
                return [] if PurePosixPath(script).name in NOT_TESTS else [script]
    return []


def _path_arguments(words: Sequence[str]) -> list[str]:
    paths: list[str] = []
    taking_value = False
    for word in words:
        if word in ("-s", "--start-directory", "--rootdir"):
            taking_value = True
            continue
        if taking_value:
            paths.append(word)
            taking_value = False
        elif DOTTED.match(word) and not word.endswith(".py"):
            dotted = word.replace(".", "/")
            paths += [dotted, f"{dotted}.py"]
        elif not word.startswith("-") and ("/" in word or "." in word or word.isidentifier()):
            paths.append(word.split("::", 1)[0])
    return paths


def _tox_commands(tree: Path) -> list[str]:
    parser = _ini(tree / "tox.ini")
    if parser is None:
        return []
    lines: list[str] = []
    for section in parser.sections():
        if section == "tox" or section.startswith("testenv"):
            lines += parser.get(section, "commands", fallback="").splitlines()
    return lines


def _nox_commands(tree: Path) -> list[str]:
    text = _read(tree / "noxfile.py")
    calls = re.findall(r"session\.run\(([^)]*)\)", text)
    return [" ".join(re.findall(r"['\"]([^'\"]+)['\"]", call)) for call in calls]


def _make_commands(tree: Path) -> list[str]:
    lines: list[str] = []
    in_test_target = False
    for line in _read(tree / "Makefile").splitlines():
        if re.match(r"^[A-Za-z0-9_.-]+\s*:", line):
            in_test_target = line.split(":", 1)[0].strip().startswith("test")
        elif in_test_target and line.startswith("\t"):
            lines.append(line.strip().lstrip("@-"))
    return lines


def _workflow_commands(tree: Path) -> list[str]:
    lines: list[str] = []
    folder = tree / ".github" / "workflows"
    files = sorted(folder.glob("*.y*ml")) if _inside(tree, folder) and folder.is_dir() else []
    for path in files[:20]:
        lines += [
            line.strip().removeprefix("- ").removeprefix("run:").strip()
            for line in _read(path).splitlines()
        ]
    return lines


def _existing(tree: Path, paths: Iterable[str], source: str) -> Iterator[DeclaredPath]:
    for raw in paths:
        pure = PurePosixPath(raw.strip().rstrip("/") or ".")
        if pure.is_absolute() or ".." in pure.parts or str(pure) == "." or "{" in str(pure):
            continue
        path = tree / pure
        if _inside(tree, path) and (path.is_dir() or _plain_file(path)):
            yield DeclaredPath(_relative(tree, path), source)


def _inside(tree: Path, path: Path) -> bool:
    """No part of `path` below `tree` is a symlink (nothing that leads out of the tree)."""
    current = tree
    for part in path.relative_to(tree).parts:
        current = current / part
        if current.is_symlink():
            return False
    return True


def _plain_file(path: Path) -> bool:
    return path.suffix == ".py" and path.is_file() and not path.is_symlink()


def _relative(tree: Path, path: Path) -> str:
    return path.relative_to(tree).as_posix()


def _read(path: Path) -> str:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _ini(path: Path) -> configparser.RawConfigParser | None:
    text = _read(path)
    if not text:
        return None
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    return parser


def _ini_value(path: Path, section: str, key: str) -> str:
    parser = _ini(path)
    return parser.get(section, key, fallback="") if parser is not None else ""
