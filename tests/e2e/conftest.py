"""End-to-end fixtures: real public libraries (pinned PyPI sdists made into git repositories),
each minted once per test session through the real CLI and shared by every test that needs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.acquire import pypi
from replicate.batch.store import Batch, LoadedTask
from replicate.core import TaskKind
from replicate.gen.target import (
    MIN_SPARSE_GENERATED,
    MIN_SPARSE_MUTANTS,
    MIN_STRATUM,
    MIN_TRACED,
)
from tests.integration.languages.conftest import TSLIB
from tests.once import once

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMINGS: dict[str, tuple[float, float]] = {}  # gen's wall time and the machine's pace then
BOLTONS_LIMIT = 50  # tasks minted from boltons (see the `boltons` fixture)
PACE_RUNS = 9  # processes of the fixed piece of work that sets the pace
PACE_WORK = "import ast, json, pickle; sum(i * i for i in range(300_000))"


@pytest.fixture(scope="module")
def docker_engine() -> None:
    """Skips without a docker engine, unless REPLICATE_REQUIRE_SANDBOXES names docker: fails."""
    from replicate.sandbox import SandboxUnavailable, get_sandbox

    try:
        get_sandbox("docker")
    except SandboxUnavailable as exc:
        if "docker" in os.environ.get("REPLICATE_REQUIRE_SANDBOXES", "").split(","):
            pytest.fail(f"required sandbox docker is unavailable: {exc}")
        pytest.skip(f"docker unavailable: {exc}")


@dataclass(frozen=True)
class Minted:
    name: str
    repo: Path
    batch: Path
    funnel: dict[str, Any]
    wall_s: float
    pace_s: float  # `machine_pace()` measured around this gen

    def stage(self, name: str) -> int:
        return next(int(s["count"]) for s in self.funnel["stages"] if s["stage"] == name)


# The first test file of each shared batch's users (boltons, the demo, more-itertools): they run
# first in the layer, so that xdist's workers mint the batches side by side, not one by one
FIRST = ("test_class_tasks.py", "test_demo.py", "test_alternatives.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    ours = [n for n, item in enumerate(items) if here in Path(str(item.fspath)).parents]
    for n in ours:
        items[n].add_marker(pytest.mark.e2e)
    ordered = sorted((items[n] for n in ours), key=lambda item: item.fspath.basename not in FIRST)
    for n, item in zip(ours, ordered, strict=True):
        items[n] = item


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker sends the timings of the batches it minted to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["e2e_timings"] = TIMINGS


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    TIMINGS.update(node.workeroutput.get("e2e_timings", {}))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for name, (seconds, pace) in TIMINGS.items():
        terminalreporter.write_line(
            f"e2e: replicate gen on {name} took {seconds:.0f} s"
            f" = {seconds / pace:.0f} paces (a pace: {pace:.3f} s here, now)"
        )


def machine_pace() -> float:
    """Seconds this machine takes, now, for a fixed piece of gen-like work: the median of
    `PACE_RUNS` Python processes that start, import and loop (gen's time is mostly processes
    like these).  Gen's wall time is judged against it: these machines differ 2x and more from
    one run to the next, so a guard in plain seconds fails on a slow day, not on a slow gen."""
    times = []
    for _ in range(PACE_RUNS):
        started = time.monotonic()
        subprocess.run([sys.executable, "-c", PACE_WORK], check=True, timeout=60)
        times.append(time.monotonic() - started)
    return sorted(times)[len(times) // 2]


def replicate(
    *args: str, timeout: float = 1200, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI (`python -m replicate ...`), from `cwd` if given, with `env` added to
    this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "replicate", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=cwd,
        env=None if env is None else {**os.environ, **env},
    )


def sdist_repo(root: Path, name: str, version: str) -> Path:
    """A pinned sdist made a git repository under `root`, as `pypi:` sources are."""
    return pypi.sdist_repo(name, version, root)


def mint(name: str, repo: Path, out: Path, *extra: str) -> Minted:
    before = machine_pace()
    started = time.monotonic()
    done = replicate("gen", "--repo", str(repo), "--out", str(out), "--json", *extra)
    wall = time.monotonic() - started
    pace = (before + machine_pace()) / 2
    assert done.returncode == 0, done.stderr[-3000:]
    TIMINGS[name] = (wall, pace)
    return Minted(name, repo, out, json.loads(done.stdout), wall, pace)


def minted_once(
    factory: pytest.TempPathFactory, key: str, make: Callable[[Path], Minted]
) -> Minted:
    """`make(folder)` once per test run (tests/once.py): a batch no test writes into."""
    return minted_all_once(factory, key, lambda root: {key: make(root)})[key]


def minted_all_once(
    factory: pytest.TempPathFactory, key: str, make: Callable[[Path], dict[str, Minted]]
) -> dict[str, Minted]:
    """`make(folder)`, several repositories minted (into one batch, say), once per test run."""

    def work(root: Path) -> dict[str, Any]:
        made = make(root)
        return {
            name: {**asdict(m), "repo": str(m.repo), "batch": str(m.batch)}
            for name, m in made.items()
        }

    record = once(factory, key, work)
    return {
        name: Minted(**{**r, "repo": Path(r["repo"]), "batch": Path(r["batch"])})
        for name, r in record.items()
    }


@pytest.fixture(scope="session")
def more_itertools(tmp_path_factory: pytest.TempPathFactory) -> Minted:
    def make(root: Path) -> Minted:
        repo = sdist_repo(root, "more-itertools", "10.5.0")
        return mint("more-itertools 10.5.0", repo, root / "batch")

    return minted_once(tmp_path_factory, "more-itertools", make)


@pytest.fixture(scope="session")
def boltons(tmp_path_factory: pytest.TempPathFactory) -> Minted:
    # At most BOLTONS_LIMIT tasks (the whole library mints ~145, the longest step of a CI run):
    # its harvest, environment and every stage of gen still run on real code; more-itertools
    # is minted whole.
    # Module tasks are asked for here (gen's default is function, method and class): the e2e of
    # the class and module kinds (`test_class_tasks.py`, `test_class_table.py`,
    # `test_module_tasks.py`) reads them from this batch.
    kinds = ("--kinds", "function,method,class,module")

    def make(root: Path) -> Minted:
        repo = sdist_repo(root, "boltons", "24.1.0")
        return mint("boltons 24.1.0", repo, root / "batch", "--limit", str(BOLTONS_LIMIT), *kinds)

    return minted_once(tmp_path_factory, "boltons", make)


@pytest.fixture(scope="session")
def tslib(tmp_path_factory: pytest.TempPathFactory) -> Minted:
    """corpus/tslib, our own TypeScript library, minted offline once per test run: the
    TypeScript e2e (`test_typescript.py`) and the JavaScript downstream one read it."""

    def make(root: Path) -> Minted:
        return mint("corpus/tslib (typescript)", TSLIB, root / "batch")

    return minted_once(tmp_path_factory, "tslib", make)


def single_ids(batch: Batch) -> list[str]:
    """The batch's function and method tasks: the degenerate agents write one function, not a
    class or a file, and a function's families are not a class's (a class task's are checked
    apart, `test_class_table.py`)."""
    singles = (TaskKind.FUNCTION, TaskKind.METHOD)
    return [i for i in batch.ids if batch.spec(i).task_kind in singles]


@dataclass(frozen=True)
class Demo:
    out: Path  # holds batch/ (the mint of corpus/samplelib) and run/
    done: subprocess.CompletedProcess[str]


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """`bash scripts/demo.sh` run once: the README's main job. Its batch is also the fresh mint
    of corpus/samplelib that the committed bundled batch is compared with (the same command)."""

    def work(root: Path) -> dict[str, Any]:
        out = root / "demo"
        env = {**os.environ, "REPLICATE_DEMO_OUT": str(out), "COLUMNS": "240", "NO_COLOR": "1"}
        done = subprocess.run(
            ["bash", "scripts/demo.sh"],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
            check=False,
        )
        return {"out": str(out), "returncode": done.returncode, "stdout": done.stdout,
                "stderr": done.stderr}  # fmt: skip

    record = once(tmp_path_factory, "demo", work)
    done = subprocess.CompletedProcess(
        ["bash", "scripts/demo.sh"], record["returncode"], record["stdout"], record["stderr"]
    )
    return Demo(Path(record["out"]), done)


@pytest.fixture(scope="session", params=["more_itertools", "boltons"])
def public_batch(request: pytest.FixtureRequest) -> Minted:
    """Each real library's batch in turn (each minted once per session)."""
    minted: Minted = request.getfixturevalue(request.param)
    return minted


def minimum_breaches(batch_dir: Path) -> list[str]:
    """Tasks that break the hidden-input minimums of `replicate.gen.target`: at least MIN_TRACED
    inputs recorded from the tests — or, for a function the tests call once or twice, at least
    MIN_SPARSE_GENERATED generated inputs, MIN_SPARSE_MUTANTS mutants graded, the kill-rate floor
    reached and no traced stratum of its own — and every stratum at least MIN_STRATUM inputs
    (unless the task has a single stratum)."""
    batch = Batch.open(batch_dir)
    breaches = []
    for ident in batch.ids:
        task = batch.load(ident)
        traced = sum(1 for i in task.inputs if i.provenance == "traced")
        strata: dict[str, int] = {}
        for item in task.inputs:
            strata[item.stratum] = strata.get(item.stratum, 0) + 1
        small = len(strata) > 1 and min(strata.values()) < MIN_STRATUM
        if (traced < MIN_TRACED and not _vouched(task)) or small:
            breaches.append(f"{ident}: traced={traced} strata={strata}")
    return breaches


def sparse_tasks(batch_dir: Path) -> list[str]:
    """Tasks minted from fewer than MIN_TRACED traced calls."""
    batch = Batch.open(batch_dir)
    return [
        ident
        for ident in batch.ids
        if 0 < sum(1 for i in batch.load(ident).inputs if i.provenance == "traced") < MIN_TRACED
    ]


def _vouched(task: LoadedTask) -> bool:
    """A sparse task held to the rule that lets it stand (see `replicate.gen.target`)."""
    generated = sum(1 for i in task.inputs if i.provenance != "traced")
    strength = task.hidden.strength
    return (
        generated >= MIN_SPARSE_GENERATED
        and strength is not None
        and strength.mutants >= MIN_SPARSE_MUTANTS
        and strength.kill_rate >= strength.threshold
        and all(i.stratum != "traced" for i in task.inputs)
    )
