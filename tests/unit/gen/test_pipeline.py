from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from replicate.core.progress import NullProgress
from replicate.gen import pipeline
from replicate.gen.funnel import FunnelCounter
from replicate.gen.harvest import HarvestedCall
from replicate.gen.mint import Dropped, Minted


class _Fake:
    """mint_target: the first target waits until every other one is minted (5 s at most)."""

    def __init__(self, symbols: list[str], hold_first: bool) -> None:
        self.others_done = threading.Semaphore(0)
        self.others = len(symbols) - 1 if hold_first else 0
        self.first = symbols[0]
        self.started: list[str] = []
        self.first_waited_out = False

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
        if symbol.endswith("x"):
            return Dropped("validated", "no")
        return Minted(task=symbol)  # a name stands for the task


def _mint_all(
    monkeypatch: pytest.MonkeyPatch, symbols: list[str], limit: int | None, hold_first: bool
) -> tuple[list[Any], FunnelCounter, _Fake]:
    fake = _Fake(symbols, hold_first)
    monkeypatch.setattr(pipeline, "mint_target", fake)
    options = pipeline.GenOptions(repo="r", out=Path("o"), workers=2, limit=limit)
    harvest: Any = SimpleNamespace(calls={s: () for s in symbols})
    prepared: Any = SimpleNamespace(context=None, snapshot=None, repo_dir=None)
    targets: Any = [SimpleNamespace(symbol=s, kind="function", class_name=None) for s in symbols]
    sandbox: Any = None
    counter = FunnelCounter()
    minted = pipeline._mint_all(
        prepared,
        targets,
        harvest,
        sandbox,
        options,
        counter,
        NullProgress(),
    )
    return [m.task for m in minted], counter, fake


def test_a_slow_target_holds_up_no_other_and_tasks_keep_target_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    symbols = [f"t{n:02d}" for n in range(24)] + ["t24x"]
    tasks, counter, fake = _mint_all(monkeypatch, symbols, None, hold_first=True)
    # the other worker minted all 24 others while the first one was still at work (a batch
    # barrier, as `pool.map` over chunks of 8 had, would have made the first wait it out)
    assert not fake.first_waited_out
    assert tasks == symbols[:-1]
    assert counter.counts["validated"] == 24 and counter.drops["validated"]["no"] == 1


def test_limit_stops_taking_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    symbols = [f"t{n:02d}" for n in range(40)]
    tasks, counter, fake = _mint_all(monkeypatch, symbols, 3, hold_first=False)
    assert tasks == symbols[:3] and counter.counts["validated"] == 3
    assert counter.drops["encodable"]["not processed (--limit reached)"] == 37
    assert len(fake.started) <= 3 + 1 + 2 * 2  # the limit, the one that hit it, those running


def test_class_calls_pool_the_recorded_class_calls_of_a_methods_class() -> None:
    def calls(*ctors: str) -> tuple[HarvestedCall, ...]:
        return tuple(HarvestedCall(pickle_b64="x", origin="o", ctor_b64=c) for c in ctors)

    harvest: Any = SimpleNamespace(
        calls={
            "m.Box.b": calls("B", "A", ""),
            "m.Box.a": calls("A", "C"),
            "m.Box.Inner.f": calls("Z"),  # a nested class's method: another class
            "m.Boxes.g": calls("Y"),  # a class whose name merely starts the same
            "m.f": calls(),
        }
    )

    def target(symbol: str, kind: str, class_name: str | None) -> Any:
        return SimpleNamespace(symbol=symbol, kind=kind, module="m", class_name=class_name)

    assert pipeline.class_calls(harvest, target("m.Box.a", "method", "Box")) == ("A", "C", "B")
    assert pipeline.class_calls(harvest, target("m.Box.s", "staticmethod", "Box")) == ()
    assert pipeline.class_calls(harvest, target("m.f", "function", None)) == ()
    many: Any = SimpleNamespace(calls={"m.Box.a": calls(*(str(n) for n in range(20)))})
    found = pipeline.class_calls(many, target("m.Box.a", "method", "Box"))
    assert found == tuple(str(n) for n in range(pipeline.CTORS_PER_CLASS))
