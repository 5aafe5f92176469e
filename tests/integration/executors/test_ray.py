"""The Ray executor on a real local Ray instance (not local mode): the work runs in Ray's worker
processes, and comes back whole."""

from __future__ import annotations

import os

import pytest

from replicate.executors.ray_cluster import RayExecutor

ray = pytest.importorskip("ray")


def where(n: int) -> tuple[int, int, str]:
    import ray as in_worker

    return n * n, os.getpid(), in_worker.get_runtime_context().get_worker_id()


def test_items_run_as_ray_tasks_in_worker_processes() -> None:
    with RayExecutor(num_cpus=2) as executor:
        assert ray.is_initialized()
        assert [node["Alive"] for node in ray.nodes()] == [True]  # a real instance, one node
        got = sorted(executor.map(where, [1, 2, 3, 4]))
    assert not ray.is_initialized()  # the instance it started is stopped
    assert [n for n, _, _ in got] == [1, 4, 9, 16]
    assert all(pid != os.getpid() for _, pid, _ in got)  # local mode would run them here
    assert all(worker for _, _, worker in got)
