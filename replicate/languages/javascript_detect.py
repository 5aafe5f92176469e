"""Which language a repository tree is written in, and which test runner its package.json names.

Read statically: nothing is installed or run. A tree with a `package.json` at its root and no
Python package there (no `pyproject.toml`, `setup.py` or `setup.cfg`) is JavaScript, or TypeScript
when it has a `tsconfig.json` or more TypeScript than JavaScript source files.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from pathlib import Path

from replicate.languages.javascript_extract import TS_SUFFIXES
from replicate.languages.javascript_layout import iter_source_files

_PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")


class TestRunner(enum.Enum):
    """The test runner a package.json names (its `test` script first, then its dependencies)."""

    __test__ = False  # not a pytest test class

    JEST = "jest"
    VITEST = "vitest"
    MOCHA = "mocha"
    AVA = "ava"
    TAPE = "tape"
    TAP = "tap"  # node-tap, not tape
    UVU = "uvu"
    NODE_TEST = "node:test"
    UNKNOWN = "unknown"


# Words of a test script, or dependency names, that name each runner; checked in this order.
_RUNNER_WORDS: tuple[tuple[TestRunner, tuple[str, ...]], ...] = (
    (TestRunner.VITEST, ("vitest",)),
    (TestRunner.JEST, ("jest", "ts-jest", "@jest/core")),
    (TestRunner.MOCHA, ("mocha",)),
    (TestRunner.AVA, ("ava",)),
    (TestRunner.TAPE, ("tape",)),
    (TestRunner.TAP, ("tap",)),
    (TestRunner.UVU, ("uvu",)),
)


@dataclass(frozen=True)
class Detection:
    language: str  # "javascript" or "typescript"
    runner: TestRunner


def detect_language(root: Path) -> Detection | None:
    """The JavaScript/TypeScript detection of the tree at `root`; None when it is not one (a
    Python package, or no package.json)."""
    if not (root / "package.json").is_file():
        return None
    if any((root / marker).is_file() for marker in _PYTHON_MARKERS):
        return None
    return Detection(language=_language(root), runner=read_runner(root / "package.json"))


def _language(root: Path) -> str:
    if (root / "tsconfig.json").is_file():
        return "typescript"
    typescript = javascript = 0
    for _, rel in iter_source_files(root):
        if rel.endswith(TS_SUFFIXES):
            typescript += 1
        else:
            javascript += 1
    return "typescript" if typescript > javascript else "javascript"


def read_runner(package_json: Path) -> TestRunner:
    """The runner `package_json` names; `UNKNOWN` when it names none or cannot be read."""
    try:
        manifest = json.loads(package_json.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return TestRunner.UNKNOWN
    if not isinstance(manifest, dict):
        return TestRunner.UNKNOWN
    scripts = manifest.get("scripts")
    script = scripts.get("test") if isinstance(scripts, dict) else None
    if isinstance(script, str):
        found = _runner_of_script(script)
        if found is not TestRunner.UNKNOWN:
            return found
    names: set[str] = set()
    for field in ("devDependencies", "dependencies"):
        section = manifest.get(field)
        if isinstance(section, dict):
            names.update(str(name) for name in section)
    for runner, words in _RUNNER_WORDS:
        if names & set(words):
            return runner
    return TestRunner.UNKNOWN


def _runner_of_script(script: str) -> TestRunner:
    words = set(script.replace("&&", " ").replace(";", " ").split())
    if "node" in words and any(word == "--test" or word.startswith("--test=") for word in words):
        return TestRunner.NODE_TEST
    commands = {word.rsplit("/", 1)[-1] for word in words}
    for runner, names in _RUNNER_WORDS:
        if commands & set(names):
            return runner
    return TestRunner.UNKNOWN
