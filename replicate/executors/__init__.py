"""Executors by name: where the many pieces of a large job run (`local` threads, or `ray` tasks
on a cluster). A new executor is one module with an `Executor` and one line here.  `waiting`:
how the main thread waits on worker threads without holding back a SIGINT/SIGTERM handler;
`lanes`: the order pieces sharing a resource are handed to the workers in."""

from __future__ import annotations

from collections.abc import Callable

from replicate.errors import ReplicateError
from replicate.executors.base import Executor
from replicate.executors.lanes import in_lanes, openers
from replicate.executors.waiting import first_done, map_in_order, result_of


def _local(parallel: int, address: str | None) -> Executor:
    from replicate.executors.local import LocalExecutor

    return LocalExecutor(parallel)


def _ray(parallel: int, address: str | None) -> Executor:
    from replicate.executors.ray_cluster import RayExecutor  # imports ray: only when chosen

    return RayExecutor(address)


EXECUTORS: dict[str, Callable[[int, str | None], Executor]] = {"local": _local, "ray": _ray}


def executor_names() -> tuple[str, ...]:
    return tuple(sorted(EXECUTORS))


def get_executor(name: str, *, parallel: int = 1, address: str | None = None) -> Executor:
    """The executor registered as `name`; an unknown name is a one-line error naming the choices.
    `parallel` is how many items the local executor runs at once (Ray: the cluster decides);
    `address` the Ray cluster to join (none: a local Ray instance)."""
    factory = EXECUTORS.get(name)
    if factory is None:
        raise ReplicateError(
            f"unknown executor {name!r}; choose one of: {', '.join(executor_names())}"
        )
    if address and name != "ray":
        raise ReplicateError("--ray-address is for --executor ray")
    return factory(parallel, address)


__all__ = [
    "EXECUTORS",
    "Executor",
    "executor_names",
    "first_done",
    "get_executor",
    "in_lanes",
    "map_in_order",
    "openers",
    "result_of",
]
