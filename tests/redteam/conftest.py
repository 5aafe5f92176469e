"""Red-team fixtures: the sandbox backends to attack, and a folder for the naive grader's jobs.

Every test module here runs its attacks in one `replicate run` per backend (a module-scoped
fixture) and, in each test, first shows the attack fools the naive grader (tests/redteam/naive.py)
or works outside the sandbox.  Every test is marked `e2e` (the fast loop skips them).

Both isolating backends, `local` (bubblewrap) and `docker`, are always collected.  One that cannot
run here is skipped with its hint, unless REPLICATE_REQUIRE_SANDBOXES (comma-separated names; CI
sets it) names it: then its tests fail, so a missing engine or image cannot pass as green.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest

from replicate.sandbox import SandboxUnavailable, get_sandbox
from tests.redteam.scenario import GroupRun

BACKENDS = ("local", "docker")  # `plain` does not isolate: nothing to attack


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        metafunc.parametrize("backend", BACKENDS, scope="module", indirect=True)


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> str:
    """The sandbox under attack; unavailable: skipped, or failed when it is required."""
    name = str(request.param)
    try:
        get_sandbox(name)
    except SandboxUnavailable as exc:
        required = os.environ.get("REPLICATE_REQUIRE_SANDBOXES", "").split(",")
        if name in required:
            pytest.fail(f"required sandbox {name} is unavailable: {exc}")
        pytest.skip(f"{name} unavailable: {exc}")
    return name


T = TypeVar("T")


class Controls:
    """Positive controls, shown once per attack and reused by its test on the other backend:
    what an attack does outside any sandbox does not depend on the backend under attack."""

    def __init__(self) -> None:
        self._seen: dict[str, Any] = {}

    def once(self, key: str, show: Callable[[], T]) -> T:
        if key not in self._seen:
            self._seen[key] = show()
        result: T = self._seen[key]
        return result


@pytest.fixture(scope="session")
def controls() -> Controls:
    return Controls()


class Launcher:
    """Starts a module's `replicate run` on every backend that can run here at once, when its
    first test asks for one: the docker run proceeds while the local tests look at theirs."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=len(BACKENDS), thread_name_prefix="rt-run")
        self._runs: dict[str, dict[str, Future[GroupRun]]] = {}
        self._lock = threading.Lock()

    def group(self, key: str, backend: str, start: Callable[[str], GroupRun]) -> GroupRun:
        with self._lock:
            if key not in self._runs:
                self._runs[key] = {b: self._pool.submit(start, b) for b in _runnable()}
        return self._runs[key][backend].result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _runnable() -> list[str]:
    names = []
    for name in BACKENDS:
        try:
            get_sandbox(name)
        except SandboxUnavailable:
            continue
        names.append(name)
    return names


@pytest.fixture(scope="session")
def launcher() -> Iterator[Launcher]:
    runs = Launcher()
    yield runs
    runs.close()


@pytest.fixture(scope="session")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the naive grader's job files (expected outcomes of the originals) are kept."""
    return tmp_path_factory.mktemp("naive-jobs")


def pytest_itemcollected(item: pytest.Item) -> None:
    """Every red-team test is slow: mark it `e2e` (before `-m` selects, unlike a late hook)."""
    if Path(__file__).parent in Path(str(item.fspath)).parents:
        item.add_marker(pytest.mark.e2e)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Keep each module's tests of one backend together, so its shared `replicate run` (a
    module-scoped fixture per backend) runs once per backend, not again after each switch."""
    here = Path(__file__).parent
    slots = [n for n, item in enumerate(items) if here in Path(str(item.fspath)).parents]
    ours = [items[n] for n in slots]
    order = {name: n for n, name in enumerate(dict.fromkeys(_backend(i) for i in ours))}
    ours.sort(key=lambda item: (str(item.fspath), order[_backend(item)]))
    for n, item in zip(slots, ours, strict=True):
        items[n] = item


def _backend(item: pytest.Item) -> str:
    callspec = getattr(item, "callspec", None)
    return str(callspec.params.get("backend", "")) if callspec is not None else ""
