"""Sandboxes: run one command in isolation (`local` = bubblewrap, `docker` = a container per
request) or not at all (`plain`).

Backends are looked up by name and constructed lazily, on first use: importing this package
neither imports a backend nor touches the machine. The package knows nothing of jails, runners
or tasks (it imports only `replicate.errors` and `replicate.scratch`: a contract of
`lint-imports`); `base` holds the contract every backend keeps.
"""

from __future__ import annotations

import functools
import importlib

from replicate.errors import ReplicateError
from replicate.sandbox.base import (
    CHANNEL_FD,
    Arrival,
    Limits,
    Mount,
    Sandbox,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
    Started,
    StopWhen,
    WarmStart,
)
from replicate.sandbox.cgroup import sweep_cgroups
from replicate.sandbox.system import system_view

__all__ = [
    "CHANNEL_FD",
    "Arrival",
    "Limits",
    "Mount",
    "Sandbox",
    "SandboxRequest",
    "SandboxResult",
    "SandboxUnavailable",
    "Started",
    "StopWhen",
    "WarmStart",
    "get_sandbox",
    "sandbox_names",
    "sweep_cgroups",
    "system_view",
]

# name -> "module:class"; the class is imported and built on first use.
_BACKENDS: dict[str, str] = {
    "local": "replicate.sandbox.bwrap:BwrapSandbox",
    "plain": "replicate.sandbox.plain:PlainSandbox",
    "docker": "replicate.sandbox.docker:DockerSandbox",
}


def sandbox_names() -> tuple[str, ...]:
    """Every registered backend name, whether or not it can run here."""
    return tuple(_BACKENDS)


def get_sandbox(name: str) -> Sandbox:
    """The backend registered as `name` (built once per process).

    Raises ReplicateError for an unknown name and SandboxUnavailable (with a one-line hint) when
    the backend cannot run on this machine.
    """
    if name not in _BACKENDS:
        choices = ", ".join(_BACKENDS)
        raise ReplicateError(f"unknown sandbox {name!r}; choose one of: {choices}")
    return _build(name)


@functools.cache
def _build(name: str) -> Sandbox:
    module_name, _, class_name = _BACKENDS[name].partition(":")
    backend: Sandbox = getattr(importlib.import_module(module_name), class_name)()
    return backend
