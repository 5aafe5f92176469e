"""A session's repository modules imported once, before its children (`preloading._preload`,
`replicate.jail.preload`): the target's module never, and a module only when a trial in a
child of its own imported it cleanly (no error, no thread left, nothing drawn from `random`)."""

from __future__ import annotations

import base64
import dataclasses
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from replicate.core import CallInput
from replicate.jail.calls import RepoContext, RunPlan, run_calls
from replicate.jail.session import Session
from replicate.sandbox import get_sandbox
from replicate.sandbox.base import WarmStart
from tests.integration.minted import REPO_ROOT, Tiny, write_files

PACKAGE = {
    "src/prelo/__init__.py": (
        'NAME = "prelo"\n'
        "from prelo.reads_init import X\n"
        "from prelo.target import f\n"
        "from prelo.plain import VALUE\n"
        "from prelo.uses_target import g\n"
        "from prelo.threads import T\n"
        "from prelo.draws import D\n"
    ),
    "src/prelo/reads_init.py": "from prelo import NAME\nX = NAME\n",  # the package's namespace
    "src/prelo/plain.py": "VALUE = 1\n",
    "src/prelo/uses_target.py": "from prelo.target import f as g\n",
    "src/prelo/threads.py": (
        "import threading, time\n"
        "T = threading.Thread(target=time.sleep, args=(30,), daemon=True)\n"
        "T.start()\n"
    ),
    "src/prelo/draws.py": "import random\nD = random.random()\n",
    "src/prelo/uses_outside.py": "from outside_draws import O\n",  # clean, but for what it imports
    "outside/outside_draws.py": "import random\nO = random.random()\n",  # not the repository's
    "src/prelo/target.py": 'def f():\n    return "original"\n',
}
NAMES = [
    "prelo.reads_init",
    "prelo.target",
    "prelo.plain",
    "prelo.threads",
    "prelo.draws",
    "outside_draws",
    "prelo.uses_outside",
]
CANDIDATE = b"""import sys

SEEN = sorted(name for name in sys.modules if name.startswith("prelo."))


def f():
    from prelo.draws import D

    return "|".join([*SEEN, repr(D), "candidate"])
"""

TRIAL = """
import importlib.util, json, sys
root, mode, names = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path[0:0] = [root + "/src", root + "/outside"]
from replicate.jail.runner import preloading
if mode == "random unchecked":
    preloading._GET_RANDOM_STATE = lambda: 0
    preloading._SET_RANDOM_STATE = lambda state: None
if mode == "threads unchecked":
    preloading._threads = lambda: 1
if mode == "outside kept":  # undo only the repository's modules
    undo = preloading._undo
    preloading._undo = lambda names: undo([n for n in names if n.startswith("prelo")])
if mode != "target unblocked":
    sys.meta_path.insert(0, preloading._Blocked("prelo.target"))
preload = {"target": "prelo.target", "packages": ["prelo"], "modules": names}
print(json.dumps(preloading._import_kept(preload, names)))
"""


def _trial(root: Path, mode: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", TRIAL, str(root), mode, json.dumps(NAMES)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=REPO_ROOT,
    )
    return list(json.loads(done.stdout))


def test_the_trial_keeps_only_modules_that_import_cleanly_without_the_target(
    tmp_path: Path,
) -> None:
    write_files(tmp_path, PACKAGE)
    assert _trial(tmp_path, "checked") == ["prelo.plain"]
    # the controls: each check off, the module it stops is kept
    assert "prelo.target" in _trial(tmp_path, "target unblocked")  # the original, preloaded
    assert "prelo.draws" in _trial(tmp_path, "random unchecked")
    assert "prelo.threads" in _trial(tmp_path, "threads unchecked")
    # a clean module importing an unclean one from outside the repository: refused only as the
    # unclean one is undone with the rest (the control: were it left imported, it is kept)
    assert "prelo.uses_outside" in _trial(tmp_path, "outside kept")


def _local() -> WarmStart:
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    return sandbox


@pytest.fixture
def prelo(tmp_path: Path, tiny_ctx: RepoContext) -> RepoContext:
    write_files(tmp_path / "tree", PACKAGE)
    return dataclasses.replace(
        tiny_ctx, tree=tmp_path / "tree", source_roots=("src",), extra_paths=(), meta=None
    )


def test_a_candidate_in_a_preloaded_session_runs_itself_beside_the_clean_siblings(
    tiny: Tiny, prelo: RepoContext
) -> None:
    """The session's child runs the candidate (not the original) and sees the siblings the
    trial kept already imported; what the trial refused (a draw from `random`, a thread, a read
    of the package's namespace) runs in the child as in a jail of its own: same value drawn."""
    clamp = tiny.task("tinypkg.core.clamp")
    target = clamp.hidden.target.model_copy(
        update={"path": "src/prelo/target.py", "module": "prelo.target", "qualname": "f"}
    )
    settings = clamp.hidden.grading
    blob = base64.b64encode(pickle.dumps(((), {}))).decode()
    inputs = [CallInput(index=0, pickle_b64=blob)]
    alone = run_calls(prelo, target, inputs, _local(), settings, override=CANDIDATE)
    plan = RunPlan(prelo, target, settings, 0, 0)
    with Session(_local(), plan, candidates=True) as session:
        forked = session.run_all(inputs, settings, [CANDIDATE] * 2, target=target)
    cold = alone.parsed.outcomes[0]["value"]["v"].split("|")
    assert cold[0] == "prelo.reads_init" and cold[-1] == "candidate"
    for run in forked:
        assert run is not None
        warm = run.parsed.outcomes[0]["value"]["v"].split("|")
        assert warm == ["prelo.plain", *cold]  # plain preloaded; the same draw as alone
