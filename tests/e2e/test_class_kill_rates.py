"""The positive control of the class kind on boltons 24.1.0, the session's `boltons` batch (class
tasks asked for, their call sequences recorded and widened): `bench/class_kill_rates.py` grades,
for every class task minted, the mutants placed where only later states reach and gen's first
mutant of each member that no method task covers and the sequences call (gen's own mutants of
the method tasks' members are left out here: strengthened against them at gen, the method tasks
kill them all), each as the whole mutated file, on the class's method tasks and on the class
task, and prints the kill rates side by side (run with -s to see them).  It fails unless the
reference class earns 1 and the stub 0 on every class task, and the class task kills strictly
more than the method tasks on at least one class.  The same script mints more-itertools and
sortedcontainers with their tests cut to a few stateful classes (its figures: bench/README.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import REPO_ROOT, Minted


def test_a_class_task_kills_mutants_its_method_tasks_miss(boltons: Minted, tmp_path: Path) -> None:
    command = [sys.executable, str(REPO_ROOT / "bench" / "class_kill_rates.py"), "--libs"]
    command += ["boltons", "--batch", f"boltons={boltons.batch}", "--auto", "0", "--uncovered", "1"]
    command += ["--work", str(tmp_path)]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=1800, check=False, env=env
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "class tasks" in done.stdout and "FAIL" not in done.stdout
