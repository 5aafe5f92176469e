"""A re-harvest of the same tests records the same calls: each test's draws from `random` and
its temporary files' names are seeded by the test's id (`harvest/plugin.py` `_same_chance`).

The plugin runs for real (a pytest subprocess, no sandbox), twice on the same project; the
control is the same draws made twice outside the plugin, which differ.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.integration.harvest.test_harvest_plugin import _run_plugin

CORE = """
def keep(value):
    return value
"""

TESTS = """
import random
import tempfile

from pkg.core import keep


def test_a_temporary_directory():
    keep(tempfile.mkdtemp())


def test_a_random_number():
    keep(random.random())
    keep(random.random())
"""

FILES = {"pkg/__init__.py": "", "pkg/core.py": CORE, "tests/test_core.py": TESTS}
KEYS = {"pkg.core.keep": ("pkg.core", "keep", "function")}
DRAWS = "import random, tempfile; print(tempfile.mkdtemp(), random.random())"


def test_two_harvests_of_the_same_tests_record_the_same_temporary_names_and_draws(
    tmp_path: Path,
) -> None:
    temp = tmp_path / "tmp"  # each run's own empty temporary directory, as a sandbox's /tmp
    outside = set()
    for _ in range(2):
        _fresh(temp)
        outside.add(_draws(temp))
    assert len(outside) == 2  # the control: without the plugin, each run draws anew
    _fresh(temp)
    first = _run_plugin(tmp_path / "one", FILES, KEYS, TMPDIR=str(temp))
    _fresh(temp)
    second = _run_plugin(tmp_path / "two", FILES, KEYS, TMPDIR=str(temp))
    assert first.exit_code == second.exit_code == 0, first.log
    calls = first.calls("pkg.core.keep")
    assert len(calls) == 3 and calls == second.calls("pkg.core.keep")
    directory, draw, another = (args[0] for args, _ in calls)
    assert directory.startswith(str(temp)) and draw != another


def _fresh(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()


def _draws(temp: Path) -> bytes:
    env = {**os.environ, "TMPDIR": str(temp)}
    return subprocess.run([sys.executable, "-c", DRAWS], env=env, capture_output=True).stdout
