"""The real harvest, in the sandbox, on a repository whose suite starts with benchmarks.

tests/fixtures/benchrepo: `slug` is called 5,000 times with one argument by a plain loop, `area`
by pytest-benchmark's `benchmark` fixture (the repository's test extra installs it), and then
30 parametrized cases each.  The former attempt budget with the benchmark looping (the code path
before distinct budgets) is the positive control: it loses the cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.core.progress import NullProgress
from replicate.gen.prepare import PreparedRepo, prepare_repo
from replicate.harvest.collect import HarvestBudget, HarvestResult, run_harvest
from replicate.harvest.detail import harvest_detail
from replicate.jail import Jail
from replicate.sandbox.base import Sandbox
from tests.integration.minted import make_git_repo

pytestmark = pytest.mark.e2e  # builds an environment and runs the suite three times: ~1 min

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "benchrepo"
SLUG, AREA = "benchpkg.text.slug", "benchpkg.text.area"
BENCH = "tests/test_0_bench.py::"


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> PreparedRepo:
    root = tmp_path_factory.mktemp("benchrepo")
    files = {
        p.relative_to(FIXTURE).as_posix(): p.read_text()
        for p in FIXTURE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    repo = make_git_repo(root / "repo", files)
    return prepare_repo(str(repo), None, root / "batch", False, NullProgress())


def _harvest(prepared: PreparedRepo, sandbox: Sandbox, budget: HarvestBudget) -> HarvestResult:
    targets = {t.symbol: t for t in prepared.extraction.targets}
    return run_harvest(Jail(prepared.context, sandbox), targets, timeout_s=300, budget=budget)


@pytest.fixture(scope="module")
def new(prepared: PreparedRepo, local_sandbox: Sandbox) -> HarvestResult:
    return _harvest(prepared, local_sandbox, HarvestBudget())


@pytest.fixture(scope="module")
def old(prepared: PreparedRepo, local_sandbox: Sandbox) -> HarvestResult:
    return _harvest(prepared, local_sandbox, HarvestBudget(by_attempts=True, benchmarks_once=False))


def _cases(harvest: HarvestResult, symbol: str) -> set[str]:
    return {c.origin for c in harvest.calls.get(symbol, ()) if "[" in c.origin}


def test_pytest_benchmark_is_in_the_environment(prepared: PreparedRepo) -> None:
    assert (prepared.context.site_packages / "pytest_benchmark").is_dir()


def test_every_parametrized_case_is_recorded(new: HarvestResult) -> None:
    assert new.exit_code == 0, new.log_tail
    assert len(_cases(new, SLUG)) == 30
    assert len(_cases(new, AREA)) == 30
    assert new.stats[SLUG].busiest == BENCH + "test_slug_hot_loop"
    assert new.stats[SLUG].stopped == {"repeats": 1}
    # pytest-benchmark ran its function once: one call from the benchmark, then the cases
    assert new.stats[AREA].calls == 31
    assert any("--benchmark-disable" in note for note in new.notes)


def test_the_former_budget_loses_them(old: HarvestResult) -> None:
    assert old.exit_code == 0, old.log_tail
    assert _cases(old, SLUG) == set() and _cases(old, AREA) == set()
    assert old.stats[SLUG].spent_in == BENCH + "test_slug_hot_loop"
    assert old.stats[AREA].spent_in == BENCH + "test_area_benchmark"
    assert old.stats[AREA].calls > 1_000  # the benchmark's own loop
    detail = harvest_detail(old, AREA)
    assert "1 distinct argument seen" in detail
    assert f"budget spent in test {BENCH}test_area_benchmark" in detail


def test_distinct_budgets_alone_survive_the_benchmark_loop(
    prepared: PreparedRepo, local_sandbox: Sandbox
) -> None:
    looping = _harvest(prepared, local_sandbox, HarvestBudget(benchmarks_once=False))
    assert looping.stats[AREA].calls > 1_000
    assert len(_cases(looping, AREA)) == 30
