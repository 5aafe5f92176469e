"""`--repo npm:NAME@VERSION`: the registry's tarball made a git repository with one
deterministic commit (the same id from another cache), and a package npm does not have refused
in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replicate.acquire import acquire
from replicate.errors import ReplicateError

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is missing")


def test_a_tarball_becomes_one_deterministic_commit(tmp_path: Path) -> None:
    first = acquire("npm:minimist@1.2.8", None, tmp_path / "one")
    again = acquire("npm:minimist@1.2.8", None, tmp_path / "two")
    assert first.commit == again.commit
    assert (first.key, first.url) == ("minimist-1.2.8", "npm:minimist@1.2.8")
    tree = tmp_path / "one" / "npm-packages" / "minimist-1.2.8" / "minimist-1.2.8"
    assert (tree / "package.json").is_file() and (tree / "test" / "parse.js").is_file()


def test_a_package_npm_does_not_have_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ReplicateError, match="cannot fetch npm:") as caught:
        acquire("npm:replicate-no-such-package-0f3a9@1.0.0", None, tmp_path)
    assert "\n" not in str(caught.value)
