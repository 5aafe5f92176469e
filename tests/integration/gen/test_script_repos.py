"""`gen` on a JavaScript/TypeScript repository: recognised, then refused in one line (minting
one is a later slice of issue 48)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.minted import make_git_repo, run_cli

MANIFEST = json.dumps({"name": "tiny-js", "version": "1.0.0", "scripts": {"test": "vitest run"}})


def test_gen_refuses_a_javascript_repository_in_one_line(tmp_path: Path) -> None:
    files = {"package.json": MANIFEST, "index.js": "export function f(a) { return a; }\n"}
    repo = make_git_repo(tmp_path / "tiny-js", files)
    done = run_cli("gen", "--repo", str(repo), "--out", str(tmp_path / "batch"))
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: JavaScript/TypeScript repositories are detected (runner: vitest)"
        " but not minted yet\n"
    )


def test_a_python_package_with_a_package_json_is_not_refused_as_javascript(
    tmp_path: Path,
) -> None:
    # the control: the same package.json beside a Python package reaches Python's extraction
    files = {"package.json": MANIFEST, "pyproject.toml": "[project]\nname = 'x'\n", "a.txt": ""}
    repo = make_git_repo(tmp_path / "mixed", files)
    done = run_cli("gen", "--repo", str(repo), "--out", str(tmp_path / "batch"))
    assert done.returncode == 2
    assert done.stderr == f"error: no Python source files found in {repo}\n"
