from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicate.languages import detect_language
from replicate.languages.javascript_detect import Detection, TestRunner


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def manifest(**fields: object) -> str:
    return json.dumps({"name": "pkg", "version": "1.0.0", **fields})


def test_a_package_json_without_a_python_package_is_javascript(tmp_path: Path) -> None:
    root = tree(tmp_path, {"package.json": manifest(), "index.js": "", "util.ts": ""})
    assert detect_language(root) == Detection("javascript", TestRunner.UNKNOWN)


def test_a_python_package_or_no_package_json_is_not_detected(tmp_path: Path) -> None:
    root = tree(tmp_path / "py", {"package.json": manifest(), "pyproject.toml": "", "a.js": ""})
    assert detect_language(root) is None
    assert detect_language(tree(tmp_path / "plain", {"a.js": "", "a.py": ""})) is None


def test_typescript_by_tsconfig_or_by_more_ts_sources(tmp_path: Path) -> None:
    by_config = tree(tmp_path / "c", {"package.json": manifest(), "tsconfig.json": "{}"})
    assert detect_language(by_config) == Detection("typescript", TestRunner.UNKNOWN)
    files = {"package.json": manifest(), "src/a.ts": "", "src/b.mts": "", "src/c.js": ""}
    files |= {"dist/a.js": "", "dist/b.js": "", "src/a.d.ts": ""}  # built and declared: not sources
    assert detect_language(tree(tmp_path / "s", files)) == Detection(
        "typescript", TestRunner.UNKNOWN
    )


@pytest.mark.parametrize(
    ("fields", "runner"),
    [
        ({"scripts": {"test": "jest --coverage"}}, TestRunner.JEST),
        ({"scripts": {"test": "vitest run"}}, TestRunner.VITEST),
        ({"scripts": {"test": "mocha tests.js"}}, TestRunner.MOCHA),
        ({"scripts": {"test": "xo && ava && tsd"}}, TestRunner.AVA),
        ({"scripts": {"test": "tape test/*.js"}}, TestRunner.TAPE),
        ({"scripts": {"test": "tap"}}, TestRunner.TAP),
        ({"scripts": {"test": "uvu tests"}}, TestRunner.UVU),
        ({"scripts": {"test": "node --test test/"}}, TestRunner.NODE_TEST),
        ({"scripts": {"test": "./node_modules/.bin/mocha"}}, TestRunner.MOCHA),
        (
            {"scripts": {"test": "make test"}, "devDependencies": {"vitest": "^1"}},
            TestRunner.VITEST,
        ),
        ({"devDependencies": {"ts-jest": "^29"}}, TestRunner.JEST),
        ({"scripts": {"test": "echo no tests"}}, TestRunner.UNKNOWN),
        ({"scripts": ["not", "a", "map"]}, TestRunner.UNKNOWN),
    ],
)
def test_the_runner_is_read_from_package_json(
    tmp_path: Path, fields: dict[str, object], runner: TestRunner
) -> None:
    root = tree(tmp_path, {"package.json": manifest(**fields)})
    found = detect_language(root)
    assert found is not None and found.runner is runner


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", "\udcff"])
def test_an_unreadable_package_json_names_no_runner(tmp_path: Path, text: str) -> None:
    (tmp_path / "package.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    assert detect_language(tmp_path) == Detection("javascript", TestRunner.UNKNOWN)
