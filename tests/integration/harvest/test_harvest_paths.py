"""A path a test hands a target is recorded alike in every harvest: an isolating sandbox shows
the harvest's copy of the tree at `HARVEST_ROOT`, not at the host's scratch folder, whose name
differs each time.  The plain sandbox, which can only show host paths, is the control: its two
harvests record two paths."""

from __future__ import annotations

import base64
import dataclasses
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from replicate.batch import LoadedTask
from replicate.harvest.collect import HARVEST_ROOT, run_harvest
from replicate.jail import Jail, RepoContext, get_sandbox
from replicate.sandbox import SandboxUnavailable
from replicate.sandbox.base import Sandbox

PATH_TEST = """
import os

import pytest

from tinypkg import parse_int


def test_a_path_beside_the_tests():
    with pytest.raises(ValueError):
        parse_int(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data.txt"))
"""


def _recorded_paths(ctx: RepoContext, task: LoadedTask, sandbox: Sandbox, root: Path) -> list[str]:
    tree = root / "tree"
    shutil.copytree(ctx.tree, tree, symlinks=True)
    (tree / "tests" / "test_paths.py").write_text(PATH_TEST)
    target = task.hidden.target
    jail = Jail(dataclasses.replace(ctx, tree=tree), sandbox)
    found = run_harvest(jail, {target.symbol: target}, timeout_s=300)
    calls = found.calls.get(target.symbol, [])
    args = [pickle.loads(base64.b64decode(c.pickle_b64))[0] for c in calls]
    return [a[0] for a in args if a and isinstance(a[0], str) and a[0].endswith("data.txt")]


def _isolating(name: str) -> Sandbox:
    """The sandbox `name`; skipped where it cannot run here, unless CI requires it."""
    try:
        return get_sandbox(name)
    except SandboxUnavailable as exc:
        if name in os.environ.get("REPLICATE_REQUIRE_SANDBOXES", "").split(","):
            pytest.fail(f"required sandbox {name} is unavailable: {exc}")
        pytest.skip(f"{name} unavailable: {exc}")


@pytest.mark.parametrize("name", ["local", "docker"])
def test_a_path_beside_the_tests_is_recorded_alike_in_every_harvest(
    tiny_ctx: RepoContext,
    tiny_task: Callable[[str], LoadedTask],
    tmp_path: Path,
    name: str,
) -> None:
    sandbox = _isolating(name)
    task = tiny_task("tinypkg.core.parse_int")
    plain = get_sandbox("plain")
    controls = [_recorded_paths(tiny_ctx, task, plain, tmp_path / f"plain{n}") for n in (1, 2)]
    assert len(controls[0]) == 1 and controls[0] != controls[1]  # host scratch: a new name
    ours = [_recorded_paths(tiny_ctx, task, sandbox, tmp_path / f"{name}{n}") for n in (1, 2)]
    assert ours[0] == ours[1] == [f"{HARVEST_ROOT}/work/tests/data.txt"]
