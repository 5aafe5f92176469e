"""The test layers, in the order they run: unit (no sandbox, seconds), contract, integration,
red team, end to end.  A failure in the unit layer stops the run before the slow layers start;
the time each layer took is printed at the end (a layer's time includes the fixtures its tests
set up first, such as a minting shared by the layer), with the processor time it used (this
process's and its finished subprocesses'): a layer that uses a fraction of one core mostly
waits (on timeouts, sleeps, a loaded machine), one near the machine's cores is bound by work."""

from __future__ import annotations

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
_STARTED: dict[str, float] = {}


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


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _STARTED[nodeid] = time.monotonic()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    started, used = time.monotonic(), cpu_seconds()
    yield
    layer = layer_of(item)
    SPENT[layer] += time.monotonic() - started
    CPU[layer] += cpu_seconds() - used
    COUNTS[layer] += 1


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None]:
    outcome: Any = yield
    report = outcome.get_result()
    if report.failed and layer_of(item) == "unit":
        item.session.shouldfail = "a unit test failed: the slower layers were not run"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not COUNTS:
        return
    terminalreporter.section("time per layer")
    for layer in (*LAYERS, "other"):
        if COUNTS[layer]:
            cores = CPU[layer] / SPENT[layer] if SPENT[layer] else 0.0
            terminalreporter.write_line(
                f"{layer:<12} {COUNTS[layer]:>5} tests  {SPENT[layer]:>7.0f} s"
                f"  (processor {CPU[layer]:.0f} s, {cores:.2f} cores)"
            )


@pytest.fixture
def sigusr1_interrupts() -> Generator[None, None, None]:
    """SIGUSR1 raises `tests.interrupts.Interrupted` in the main thread during the test."""
    from tests.interrupts import installed

    yield from installed()
