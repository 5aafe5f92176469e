"""The Ray executor: each item one Ray task (`@ray.remote`), on an existing cluster
(`address`) or on a local Ray instance started for the run and stopped after it.

Ray is imported here only, when this executor is chosen: the rest of replicate never needs it.
Every node runs `work` with its own replicate installation (docs/scaling.md)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from replicate.errors import InfraError, ReplicateError
from replicate.executors.base import Executor

START_ATTEMPTS = 3
T = TypeVar("T")
R = TypeVar("R")


class RayExecutor(Executor):
    name = "ray"

    def __init__(
        self, address: str | None = None, num_cpus: int | None = None, cpus_per_item: float = 1.0
    ) -> None:
        try:
            import ray
        except ImportError as exc:
            raise ReplicateError(
                "--executor ray needs Ray: pip install 'replicate-rl[ray]' (or pip install ray)"
            ) from exc
        self._ray: Any = ray
        self.cpus_per_item = cpus_per_item
        self._started = not ray.is_initialized()
        if self._started:
            self._init(_init_args(address, num_cpus), attempts=1 if address else START_ATTEMPTS)

    def _init(self, kwargs: dict[str, Any], attempts: int) -> None:
        """`ray.init`; a local instance that did not come up in time (Ray gives its raylet 30 s,
        which a loaded machine can miss) is tried again."""
        for attempt in range(1, attempts + 1):
            try:
                self._ray.init(**kwargs)
                return
            except Exception as exc:  # Ray raises a bare Exception when a node does not start
                self._ray.shutdown()
                if attempt == attempts:
                    where = kwargs.get("address", "local")
                    raise InfraError(f"cannot start or join Ray ({where}): {exc}") from exc

    def map(self, work: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        ray = self._ray
        task = ray.remote(num_cpus=self.cpus_per_item, max_retries=0)(_call)
        pending = [task.remote(work, item) for item in items]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                yield ray.get(done[0])
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)

    def close(self) -> None:
        if self._started and self._ray.is_initialized():
            self._ray.shutdown()


def _call(work: Callable[[T], R], item: T) -> R:
    return work(item)


def _init_args(address: str | None, num_cpus: int | None) -> dict[str, Any]:
    """`ray.init` arguments: join `address`, or start a local instance whose workers import
    this same replicate (its folder first on their path)."""
    if address:
        return {"address": address, "log_to_driver": False}
    here = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
    return {
        "address": "local",
        "num_cpus": num_cpus,
        "include_dashboard": False,
        "log_to_driver": False,
        "runtime_env": {"env_vars": {"PYTHONPATH": path}},
    }
