"""Sandboxes: run one command in isolation (`local` = bubblewrap, `docker` = a container per
request) or not at all (`plain`).

Backends are looked up by name and constructed lazily, on first use: importing this package
neither imports a backend nor touches the machine.
"""

from __future__ import annotations

import functools
import importlib

from replicate.errors import ReplicateError
from replicate.jail.sandbox.base import (
    CHANNEL_FD,
    Limits,
    Mount,
    Sandbox,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
)

__all__ = [
    "CHANNEL_FD",
    "Limits",
    "Mount",
    "Sandbox",
    "SandboxRequest",
    "SandboxResult",
    "SandboxUnavailable",
    "get_sandbox",
    "sandbox_names",
]

# name -> "module:class"; the class is imported and built on first use.
_BACKENDS: dict[str, str] = {
    "local": "replicate.jail.sandbox.bwrap:BwrapSandbox",
    "plain": "replicate.jail.sandbox.plain:PlainSandbox",
    "docker": "replicate.jail.sandbox.docker:DockerSandbox",
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
