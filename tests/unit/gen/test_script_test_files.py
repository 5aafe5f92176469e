"""Which files of a JavaScript/TypeScript repository gen runs as its tests (a declaration
file, `.d.ts`, is none)."""

from __future__ import annotations

from pathlib import Path

from replicate.jail.node_tests import find_test_files

FILES = (
    "index.js",
    "lib/util.js",
    "lib/util.test.js",
    "lib/util.spec.mjs",
    "test/basic.js",
    "test/fixtures/data.json",
    "tests/deep/more.cjs",
    "__tests__/a.js",
    "node_modules/dep/test/x.js",
    "src/testing.js",
    "test/types.ts",
    "test/globals.d.ts",
    "src/shapes.test.mts",
    "src/shapes.ts",
)


def test_test_files_are_named_or_under_a_test_folder(tmp_path: Path) -> None:
    for rel in FILES:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert find_test_files(tmp_path) == (
        "__tests__/a.js",
        "lib/util.spec.mjs",
        "lib/util.test.js",
        "src/shapes.test.mts",
        "test/basic.js",
        "test/types.ts",
        "tests/deep/more.cjs",
    )
