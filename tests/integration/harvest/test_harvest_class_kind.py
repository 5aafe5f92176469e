"""Recording class sequences takes nothing from the method harvest: on the renaming test's
repository (a registry whose tests call `register`, `has` and `block` on instances they built),
the harvest with the class recorded too gives each method exactly the calls it gives without.

The sequence recorder wraps the class's methods over the method recorders, so a method target's
call passes through the sequence step's frames (harvest code) before reaching its recorder: the
call must still be taken for the test's own (visible), as without the class."""

from __future__ import annotations

import pytest

from replicate.core.progress import NullProgress
from replicate.gen.classes import GEN_SEQUENCES, class_refs
from replicate.gen.prepare import PreparedRepo, prepare_repo
from replicate.harvest.collect import HarvestResult, run_harvest
from replicate.jail import Jail
from replicate.sandbox.base import Sandbox
from tests.integration.gen.test_renaming import FILES
from tests.integration.minted import make_git_repo


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> PreparedRepo:
    root = tmp_path_factory.mktemp("registry")
    repo = make_git_repo(root / "repo", FILES)
    return prepare_repo(str(repo), None, root / "batch", False, NullProgress())


def _harvest(prepared: PreparedRepo, sandbox: Sandbox, with_classes: bool) -> HarvestResult:
    targets = {t.symbol: t for t in prepared.extraction.targets}
    classes = class_refs(prepared.extraction.classes) if with_classes else {}
    jail = Jail(prepared.context, sandbox)
    return run_harvest(jail, targets, timeout_s=300, classes=classes, sequence_budget=GEN_SEQUENCES)


def test_the_method_calls_are_the_same_with_the_class_recorded(
    prepared: PreparedRepo, local_sandbox: Sandbox
) -> None:
    without = _harvest(prepared, local_sandbox, False)
    with_class = _harvest(prepared, local_sandbox, True)
    assert without.exit_code == with_class.exit_code == 0, with_class.log_tail
    assert not without.sequences and with_class.sequences  # the class was recorded
    methods = {"regpkg.core.Registry.register", "regpkg.core.Registry.has"}
    assert methods <= set(without.calls)
    assert all(c.visible for m in methods for c in without.calls[m])  # the tests' own calls
    assert with_class.calls == without.calls
    assert with_class.stats == without.stats
