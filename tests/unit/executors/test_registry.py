from __future__ import annotations

import threading
import time

import pytest

from replicate.errors import ReplicateError
from replicate.executors import executor_names, get_executor
from replicate.executors.local import LocalExecutor
from tests.unit.executors.fake import FakeExecutor


def test_names_and_unknown_name() -> None:
    assert executor_names() == ("local", "ray")
    with pytest.raises(ReplicateError, match="unknown executor 'slurm'; choose one of: local, ray"):
        get_executor("slurm")


def test_ray_address_is_only_for_ray() -> None:
    with pytest.raises(ReplicateError, match="--ray-address is for --executor ray"):
        get_executor("local", address="ray://head:10001")


def test_local_runs_every_item_once() -> None:
    with get_executor("local", parallel=3) as executor:
        assert sorted(executor.map(lambda n: n * n, [1, 2, 3, 4, 5])) == [1, 4, 9, 16, 25]


def test_local_parallel_runs_items_at_once_and_serial_does_not() -> None:
    def peak(parallel: int) -> int:
        running, seen, lock = [0], [0], threading.Lock()

        def work(_: int) -> None:
            with lock:
                running[0] += 1
                seen[0] = max(seen[0], running[0])
            time.sleep(0.05)
            with lock:
                running[0] -= 1

        list(LocalExecutor(parallel).map(work, range(6)))
        return seen[0]

    assert peak(1) == 1
    assert peak(3) == 3


def test_local_hands_back_results_as_they_finish() -> None:
    def work(n: int) -> int:
        time.sleep(0.3 if n == 0 else 0.0)
        return n

    assert list(LocalExecutor(2).map(work, [0, 1])) == [1, 0]


def test_fake_runs_last_first_and_records() -> None:
    fake = FakeExecutor()
    assert list(fake.map(str, [1, 2])) == ["2", "1"]
    assert fake.items == [1, 2]
