"""The test layers, in the order they run: unit (no sandbox, seconds), contract, integration,
red team, end to end.  A failure in the unit layer stops the run before the slow layers start;
the time each layer took is printed at the end (a layer's time includes the fixtures its tests
set up first, such as a minting shared by the layer), with the processor time it used (this
process's and its finished subprocesses'): a layer that uses a fraction of one core mostly
waits (on timeouts, sleeps, a loaded machine), one near the machine's cores is bound by work.

`scripts/test.sh` runs the layers in pytest-xdist workers (`-n`, `--dist loadgroup`): each test
file is one unit of work (its module-scoped fixtures set up once), and the files of a group in
`GROUPS` run one after another on one worker.  The workers take the files in the layers' order; a
unit failure stops every worker after its current test.  Each worker's figures are added up for
the summary, with each layer's span (its first test's start to its last test's end, in wall time:
the layers overlap under xdist)."""

from __future__ import annotations

import os
import resource
import time
from collections import Counter
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

LAYERS = ("unit", "contract", "integration", "redteam", "e2e")
HERE = Path(__file__).parent
SPENT: Counter[str] = Counter()
CPU: Counter[str] = Counter()
COUNTS: Counter[str] = Counter()
SPAN: dict[str, tuple[float, float]] = {}  # a layer's first start and last end (epoch seconds)
_STARTED: dict[str, float] = {}
# Files run one after another on one worker under xdist (a test file is its own group otherwise).
GROUPS = {
    # a local Ray instance each: two at once on one machine contend for Ray's ports and /tmp/ray
    "ray": ("integration/executors/test_ray.py", "integration/scoring/test_spread.py",
            "e2e/test_ray.py"),
    # they build, run and remove the same task images (content-addressed) in the docker engine
    "docker-images": ("e2e/test_harbor_images.py", "e2e/test_harbor_run.py"),
    # they measure latency (a call's duration, a warm jail's speed-up, /health beside a hostile
    # request, an LLM deadline, a test stopped at the harvest's per-item limit): not side by side
    "latency": ("integration/sandbox/test_process.py", "integration/jail/test_warm.py",
                "integration/integrations/test_serve_hostile.py",
                "integration/agents/test_llm_deadline.py",
                "integration/harvest/test_harvest_item_limit.py"),
}  # fmt: skip
_GROUP_OF = {path: group for group, paths in GROUPS.items() for path in paths}


def layer_of(item: pytest.Item) -> str:
    try:
        first = Path(str(item.fspath)).relative_to(HERE).parts[0]
    except ValueError:
        return "other"
    return first if first in LAYERS else "other"


def cpu_seconds() -> float:
    """Processor seconds used so far by this process and the subprocesses it has waited for."""
    used = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(usage.ru_utime + usage.ru_stime for usage in used)


def _rank(item: pytest.Item) -> int:
    layer = layer_of(item)
    return LAYERS.index(layer) if layer in LAYERS else len(LAYERS)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: each layer keeps its files' order
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:  # before xdist reads the marks
        for item in items:
            item.add_marker(pytest.mark.xdist_group(_group(item)))


def _group(item: pytest.Item) -> str:
    try:
        path = Path(str(item.fspath)).relative_to(HERE).as_posix()
    except ValueError:
        path = str(item.fspath)
    return _GROUP_OF.get(path, path)


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _STARTED[nodeid] = time.monotonic()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    started, used, began = time.monotonic(), cpu_seconds(), time.time()
    yield
    layer = layer_of(item)
    SPENT[layer] += time.monotonic() - started
    CPU[layer] += cpu_seconds() - used
    COUNTS[layer] += 1
    first, _ = SPAN.get(layer, (began, 0.0))
    SPAN[layer] = (first, time.time())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    outcome: Any = yield
    report = outcome.get_result()
    if report.failed and layer_of(item) == "unit":
        item.session.shouldfail = "a unit test failed: the slower layers were not run"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker sends its figures to the controller (with its `workeroutput`)."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["layers"] = {
            layer: (SPENT[layer], CPU[layer], COUNTS[layer], *SPAN[layer]) for layer in COUNTS
        }


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller adds up its workers' figures."""
    for layer, (spent, cpu, count, first, last) in node.workeroutput.get("layers", {}).items():
        SPENT[layer] += spent
        CPU[layer] += cpu
        COUNTS[layer] += count
        was_first, was_last = SPAN.get(layer, (first, last))
        SPAN[layer] = (min(first, was_first), max(last, was_last))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COUNTS:
        return
    terminalreporter.section("time per layer")
    for layer in (*LAYERS, "other"):
        if COUNTS[layer]:
            first, last = SPAN[layer]
            cores = CPU[layer] / (last - first) if last > first else 0.0
            terminalreporter.write_line(
                f"{layer:<12} {COUNTS[layer]:>5} tests  {SPENT[layer]:>7.0f} s in tests"
                f"  {last - first:>7.0f} s from first to last"
                f"  (processor {CPU[layer]:.0f} s, {cores:.2f} cores)"
            )


@pytest.fixture
def sigusr1_interrupts() -> Generator[None, None, None]:
    """SIGUSR1 raises `tests.interrupts.Interrupted` in the main thread during the test."""
    from tests.interrupts import installed

    yield from installed()
