from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from replicate.batch import minting
from replicate.core import DropReason
from replicate.core.progress import NullProgress
from replicate.errors import ReplicateError
from replicate.gen import pipeline, publish
from replicate.gen.audit import Leak
from replicate.gen.funnel import FunnelCounter
from replicate.gen.ledger import LEDGER, Ledger, LedgerKey, decided, read_entries
from replicate.gen.target import Dropped, Minted
from replicate.harvest.collect import HarvestedCall, HarvestResult, TargetStats
from replicate.harvest.reading import CTORS_PER_CLASS
from replicate.sandbox.plain import PlainSandbox

LEAK_REASON = "reference body visible to the agent in the standard library"


class _Fake:
    """mint_target: the first target waits until every other one is minted (5 s at most)."""

    def __init__(self, symbols: list[str], hold_first: bool) -> None:
        self.others_done = threading.Semaphore(0)
        self.others = len(symbols) - 1 if hold_first else 0
        self.first = symbols[0]
        self.started: list[str] = []
        self.first_waited_out = False
        self.fail = ""
        self.sleep = 0.0

    def __call__(self, *args: Any, **kwargs: Any) -> Minted | Dropped:
        symbol = args[3].symbol
        self.started.append(symbol)
        if symbol == self.first:
            for _ in range(self.others):
                if not self.others_done.acquire(timeout=5):
                    self.first_waited_out = True
                    break
        else:
            self.others_done.release()
        if symbol == self.fail:
            raise RuntimeError("killed")  # stands for a kill mid-mint
        if self.sleep:
            time.sleep(self.sleep)
        if symbol.endswith("x"):
            return Dropped("validated", DropReason.SEARCHED_MISS)
        if symbol.endswith("y"):
            return Dropped("deterministic", DropReason.NO_INPUT_SURVIVES)
        return Minted(task=_task(symbol))


class _Audit:
    """The leak audit: the tasks named in `leaked` are found in the standard library."""

    def __init__(self, leaked: frozenset[str] = frozenset()) -> None:
        self.leaked = leaked

    def leaks(self, tasks: list[Any]) -> dict[str, Leak]:
        return {
            t.id: Leak("the standard library", Path("/x.py")) for t in tasks if t.id in self.leaked
        }


NO_JAIL: Any = None  # runs nothing here: mint_target is replaced


def _task(symbol: str) -> Any:
    spec = SimpleNamespace(id=symbol)
    return SimpleNamespace(
        id=symbol, spec=spec, hidden=None, prompt="", inputs=(), expected={}, sequences=()
    )


def _write_task(out: Path, spec: Any, *_rest: Any) -> None:
    """Stands for `write_task`: the public task.json (the file it writes last)."""
    (out / "specs" / spec.id).mkdir(parents=True, exist_ok=True)
    (out / "specs" / spec.id / "task.json").write_text("{}")


def _mint_all(
    monkeypatch: pytest.MonkeyPatch,
    symbols: list[str],
    limit: int | None,
    hold_first: bool,
    out: Path,
    *,
    budget_s: float | None = None,
    leaked: frozenset[str] = frozenset(),
    fail: str = "",
    sleep: float = 0.0,
) -> tuple[list[Any], FunnelCounter, _Fake]:
    fake = _Fake(symbols, hold_first)
    fake.fail, fake.sleep = fail, sleep
    monkeypatch.setattr(pipeline, "mint_target", fake)
    monkeypatch.setattr(publish, "write_task", _write_task)
    monkeypatch.setattr(publish, "read_task_files", lambda out, task_id: None)  # files stood for
    options = pipeline.GenOptions(repo="r", out=out, workers=2, limit=limit, budget_s=budget_s)
    harvest = HarvestResult({s: () for s in symbols}, {}, {}, (), 0, False)
    prepared: Any = SimpleNamespace(context=None, snapshot=None, repo_dir=None)
    targets: Any = [
        SimpleNamespace(symbol=s, kind="function", class_name=None, path="m.py") for s in symbols
    ]
    out.mkdir(exist_ok=True)
    key = LedgerKey("r", "c0ffee", "g/1", options.min_kill_rate)
    known = decided(out, key)
    counter = FunnelCounter()
    audit: Any = _Audit(leaked)
    publisher = publish.Publisher(out, Ledger(out, key), counter, audit, NullProgress())
    deadline = None if budget_s is None else time.monotonic() + budget_s
    work = pipeline._Work(prepared, harvest, PlainSandbox(), options, known, deadline, None)
    pipeline._mint_all(work, targets, publisher, NullProgress())
    return publisher.task_ids, counter, fake


def test_a_slow_target_holds_up_no_other_and_tasks_keep_target_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    symbols = [f"t{n:02d}" for n in range(24)] + ["t24x"]
    tasks, counter, fake = _mint_all(monkeypatch, symbols, None, True, tmp_path)
    # the other worker minted all 24 others while the first one was still at work (a batch
    # barrier, as `pool.map` over chunks of 8 had, would have made the first wait it out)
    assert not fake.first_waited_out
    assert tasks == symbols[:-1]
    assert counter.counts["validated"] == 24
    assert counter.drops["validated"][DropReason.SEARCHED_MISS] == 1


def test_limit_stops_taking_targets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    symbols = [f"t{n:02d}" for n in range(40)]
    tasks, counter, fake = _mint_all(monkeypatch, symbols, 3, False, tmp_path)
    assert tasks == symbols[:3] and counter.counts["validated"] == 3
    assert counter.drops["encodable"]["not processed (--limit reached)"] == 37
    assert len(fake.started) <= 3 + 1 + 2 * 2  # the limit, the one that hit it, those running


def test_class_calls_pool_the_recorded_class_calls_of_a_methods_class() -> None:
    def calls(*ctors: str) -> tuple[HarvestedCall, ...]:
        return tuple(HarvestedCall(pickle_b64="x", origin="o", ctor_b64=c) for c in ctors)

    def harvested(found: dict[str, tuple[HarvestedCall, ...]]) -> HarvestResult:
        return HarvestResult(found, {}, {}, (), 0, False)

    harvest = harvested(
        {
            "m.Box.b": calls("B", "A", ""),
            "m.Box.a": calls("A", "C"),
            "m.Box.Inner.f": calls("Z"),  # a nested class's method: another class
            "m.Boxes.g": calls("Y"),  # a class whose name merely starts the same
            "m.f": calls(),
        }
    )

    def target(symbol: str, kind: str, class_name: str | None) -> Any:
        return SimpleNamespace(symbol=symbol, kind=kind, module="m", class_name=class_name)

    assert harvest.class_calls(target("m.Box.a", "method", "Box")) == ("A", "C", "B")
    assert harvest.class_calls(target("m.Box.s", "staticmethod", "Box")) == ()
    assert harvest.class_calls(target("m.f", "function", None)) == ()
    many = harvested({"m.Box.a": calls(*(str(n) for n in range(20)))})
    found = many.class_calls(target("m.Box.a", "method", "Box"))
    assert found == tuple(str(n) for n in range(CTORS_PER_CLASS))


SYMBOLS = [f"t{n:02d}{'xy'[n % 2] if n % 3 == 0 else ''}" for n in range(30)]
LEAKED = frozenset({"t04", "t22"})


def _funnel(counter: FunnelCounter) -> tuple[dict[str, int], dict[str, list[tuple[str, int]]]]:
    """What the funnel table shows: counts, and drop reasons in their shown order."""
    drops = {stage: reasons.most_common() for stage, reasons in counter.drops.items()}
    return dict(counter.counts), drops


def test_a_mint_killed_midway_resumes_where_it_stopped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    tasks, counter, _ = _mint_all(monkeypatch, SYMBOLS, None, False, whole, leaked=LEAKED)
    with pytest.raises(RuntimeError):
        _mint_all(monkeypatch, SYMBOLS, None, False, killed, leaked=LEAKED, fail="t13")
    decided_before = len(read_entries(killed))
    assert 0 < decided_before <= 13  # the targets before the kill, each on its own line
    again, resumed, fake = _mint_all(monkeypatch, SYMBOLS, None, False, killed, leaked=LEAKED)
    # only the undecided targets were minted again ...
    assert sorted(fake.started) == SYMBOLS[decided_before:]
    # ... and the batch and its funnel are the uninterrupted run's
    assert again == tasks and _funnel(resumed) == _funnel(counter)
    assert "t04" not in tasks and counter.drops["validated"][LEAK_REASON] == 2
    assert [e.symbol for e in read_entries(killed)] == SYMBOLS
    # positive control: without the ledger every target is minted again
    (killed / LEDGER).unlink()
    _, _, fake = _mint_all(monkeypatch, SYMBOLS, None, False, killed, leaked=LEAKED)
    assert sorted(fake.started) == SYMBOLS


def test_a_resumed_target_counts_towards_the_limit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tasks, counter, _ = _mint_all(monkeypatch, SYMBOLS, 5, False, tmp_path / "whole")
    with pytest.raises(RuntimeError):
        _mint_all(monkeypatch, SYMBOLS, 5, False, tmp_path / "killed", fail="t05")
    again, resumed, fake = _mint_all(monkeypatch, SYMBOLS, 5, False, tmp_path / "killed")
    assert again == tasks and _funnel(resumed) == _funnel(counter)
    assert "t00x" not in fake.started and "t01" not in fake.started


def test_the_budget_finishes_what_runs_starts_nothing_more_and_a_later_run_mints_the_rest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    tasks, counter, _ = _mint_all(monkeypatch, SYMBOLS, None, False, tmp_path / "whole")
    out = tmp_path / "budget"
    first, stopped, fake = _mint_all(
        monkeypatch, SYMBOLS, None, False, out, budget_s=0.25, sleep=0.1
    )
    started = list(fake.started)
    assert 0 < len(started) < len(SYMBOLS) and first == tasks[: len(first)]
    # every target started was finished and recorded; none after the budget was started
    assert [e.symbol for e in read_entries(out)] == started == SYMBOLS[: len(started)]
    left = len(SYMBOLS) - len(started)
    assert stopped.drops["encodable"]["not started (time budget reached)"] == left
    again, resumed, fake = _mint_all(monkeypatch, SYMBOLS, None, False, out)
    assert sorted(fake.started) == SYMBOLS[len(started) :]
    assert again == tasks and _funnel(resumed) == _funnel(counter)


def test_a_repository_refused_before_the_batch_is_touched_leaves_no_mark(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        assert minting.is_marked(tmp_path)  # marked while the repository is brought in
        raise ReplicateError("already holds another commit")

    monkeypatch.setattr(pipeline, "prepare_repo", refuse)
    options = pipeline.GenOptions(repo="r", out=tmp_path)
    with pytest.raises(ReplicateError):
        pipeline._prepare(options, tmp_path, NullProgress())
    assert not minting.is_marked(tmp_path)
    minting.begin(tmp_path, "r")  # a killed run's mark stays: the batch is still half-written
    with pytest.raises(ReplicateError):
        pipeline._prepare(options, tmp_path, NullProgress())
    assert minting.is_marked(tmp_path)


def test_drops_for_too_few_calls_carry_what_the_harvest_saw(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stats = {
        "m.few": TargetStats(5000, 1, 1, 0, "t.py::bench", 3, "t.py::bench", 4998, {}),
        "m.lam": TargetStats(4, 0, 0, 4, "", 1, "t.py::a", 4, {}),
    }
    drops = {"m.lam": Counter({"argument does not pickle: local lambda": 4})}
    harvest = HarvestResult(
        calls={"m.few": (HarvestedCall("x", "t.py::bench"),)},
        drops=drops,
        not_wrapped={},
        extra_paths=(),
        exit_code=0,
        timed_out=False,
        configured=True,
        stats=stats,
    )
    targets: Any = {s: SimpleNamespace(symbol=s) for s in ("m.few", "m.lam")}
    key = LedgerKey("r", "c0ffee", "g/1", None)
    publisher = publish.Publisher(
        tmp_path, Ledger(tmp_path, key), FunnelCounter(), _Audit(), NullProgress()
    )
    assert [t.symbol for t in pipeline._traced(targets, harvest, {}, publisher)] == ["m.few"]
    (entry,) = read_entries(tmp_path)
    assert entry.reason == "argument does not pickle: local lambda"
    assert entry.detail == "called 4 times; traced 0; 4 dropped, 4 as " + entry.reason
    few = Dropped("deterministic", "fewer than 3 traced calls")
    monkeypatch.setattr(pipeline, "mint_target", lambda *a, **k: few)
    prepared: Any = SimpleNamespace(context=None, snapshot=None, repo_dir=None)
    target: Any = SimpleNamespace(symbol="m.few", kind="function", class_name=None)
    options = pipeline.GenOptions(repo="r", out=tmp_path)
    result = pipeline._mint_one(prepared, target, harvest, NO_JAIL, options)
    assert isinstance(result, Dropped) and result.reason == few.reason
    assert result.detail == (
        "called 5000 times in 3 tests with 1 distinct argument seen (4998 in test t.py::bench);"
        " traced 1 (budget spent in test t.py::bench)"
    )


def _harvest(**changes: Any) -> HarvestResult:
    found = HarvestResult(
        calls={},
        drops={},
        not_wrapped={"m.broken": "module does not import: ImportError: no _speedups"},
        extra_paths=(),
        exit_code=0,
        timed_out=False,
        configured=True,
    )
    return HarvestResult(**{**found.__dict__, **changes})


def _dropped_at_traced(tmp_path: Path, harvest: HarvestResult) -> dict[str, tuple[str, str]]:
    targets: Any = {s: SimpleNamespace(symbol=s) for s in ("m.broken", "m.idle")}
    tmp_path.mkdir()
    ledger = Ledger(tmp_path, LedgerKey("r", "c0ffee", "g/1", None))
    publisher = publish.Publisher(tmp_path, ledger, FunnelCounter(), _Audit(), NullProgress())
    assert pipeline._traced(targets, harvest, {}, publisher) == []
    return {e.symbol: (e.reason, e.detail) for e in read_entries(tmp_path)}


def test_drops_before_any_call_say_whether_the_tests_ran(tmp_path: Path) -> None:
    """A module that does not import is one reason whatever its error (the error is the detail);
    a target the tests never reached because they did not start is not "not called"."""
    ran = _dropped_at_traced(tmp_path / "ran", _harvest())
    assert ran == {
        "m.broken": ("module does not import", "ImportError: no _speedups"),
        "m.idle": ("not called by the tests", ""),
    }
    late = _dropped_at_traced(tmp_path / "late", _harvest(timed_out=True))
    assert late["m.idle"] == (
        "not called by the tests",
        "the test run hit its time limit before any call",
    )
    tail = "ERROR: usage: pytest [options]\nunrecognized arguments: --cov"
    broken = _dropped_at_traced(tmp_path / "x", _harvest(configured=False, log_tail=tail))
    assert broken["m.idle"] == ("the repository's tests did not start", tail)


def test_too_few_deterministic_inputs_carry_the_golden_runs_and_the_harvest(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    stats = {"m.f": TargetStats(5, 5, 5, 0, "", 1, "t.py::a", 5, {})}
    harvest = _harvest(calls={"m.f": (HarvestedCall("x", "t.py::a"),)}, stats=stats)
    golden = "2 of 5 traced inputs kept; nondeterministic outcome on 3 of 5 (return: 1, then 2)"
    dropped = Dropped("deterministic", "fewer than 3 deterministic inputs", golden)
    monkeypatch.setattr(pipeline, "mint_target", lambda *a, **k: dropped)
    prepared: Any = SimpleNamespace(context=None, snapshot=None, repo_dir=None)
    target: Any = SimpleNamespace(symbol="m.f", kind="function", class_name=None)
    options = pipeline.GenOptions(repo="r", out=tmp_path)
    result = pipeline._mint_one(prepared, target, harvest, NO_JAIL, options)
    assert isinstance(result, Dropped)
    assert result.detail == golden + "; called 5 times; traced 5"
