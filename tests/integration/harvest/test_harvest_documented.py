"""A repository whose tests are not in its tree (an sdist that ships none) still has its
documentation: `>>>` examples in a Markdown README (run past the failure a closing fence makes)
and a prompt-less `.. code-block:: python` in its docs folder are harvested, each call recorded
as a test's, and their nodes are left out of the repository-tests signal. The control: with the
documentation not handed to pytest (what the harvest did before), no call is recorded."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from replicate.batch import LoadedTask
from replicate.core import CallInput
from replicate.grading.repo_tests import node_ids
from replicate.harvest import collect
from replicate.harvest.collect import run_harvest
from replicate.jail import Jail, RepoContext, get_sandbox

README = """# tinypkg

```python
>>> from tinypkg.core import clamp
>>> clamp(-5, 0, 9)
0
```

And above the range:

```python
>>> clamp(50, 0, 9)
9
```
"""

USAGE = """Usage
=====

.. code-block:: python

    from tinypkg.core import clamp
    clamp(4, 0, 9)
"""


def _harvest(ctx: RepoContext, task: LoadedTask, root: Path) -> tuple[list[str], list[str]]:
    tree = root / "tree"
    shutil.copytree(ctx.tree, tree, symlinks=True)
    shutil.rmtree(tree / "tests")
    (tree / "README.md").write_text(README)
    (tree / "docs").mkdir()
    (tree / "docs" / "usage.rst").write_text(USAGE)
    target = task.hidden.target
    jail = Jail(dataclasses.replace(ctx, tree=tree), get_sandbox("local"))
    found = run_harvest(jail, {target.symbol: target}, timeout_s=300)
    calls = found.calls.get(target.symbol, ())
    return sorted(c.origin for c in calls), sorted(c.pickle_b64 for c in calls if c.visible)


def test_documentation_examples_are_harvested(
    tiny_ctx: RepoContext,
    tiny_task: Callable[[str], LoadedTask],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    task = tiny_task("tinypkg.core.clamp")
    origins, visible = _harvest(tiny_ctx, task, tmp_path / "documented")
    assert len(visible) == 3, visible  # both README calls (past the fence) and the docs' one
    assert "README.md::README.md" in origins
    assert any(o.startswith(".replicate-examples/docs__usage.rst.txt") for o in origins)
    inputs = [CallInput(index=k, origin=o) for k, o in enumerate(origins)]
    assert node_ids(inputs) == ()  # no documentation node reaches the repository tests
    monkeypatch.setattr(collect, "documented_examples", lambda tree: ())
    monkeypatch.setattr(collect, "write_examples", lambda tree, roots: ())
    assert _harvest(tiny_ctx, task, tmp_path / "control") == ([], [])
