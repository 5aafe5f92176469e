"""The unit layer starts no sandbox and no process other than git: a test that tries fails
with the reason, so the layer stays seconds-fast and runs first (tests/conftest.py).  A test
that needs a jail, a minted batch or the CLI in a subprocess belongs in tests/integration."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

import replicate.sandbox as sandboxes

_POPEN_INIT = subprocess.Popen.__init__
ALLOWED = ("git",)  # small repositories for the acquire and snapshot tests


class SandboxInUnitTest(RuntimeError):
    pass


def _program(args: Any) -> str:
    first = args[0] if isinstance(args, list | tuple) else str(args).split()[0]
    return str(first).rsplit("/", 1)[-1]


@pytest.fixture(autouse=True)
def _sandbox_free(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sandbox(name: str) -> Any:
        raise SandboxInUnitTest(f"the unit layer starts no sandbox ({name}): tests/integration")

    def only_git(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if _program(args) not in ALLOWED:
            raise SandboxInUnitTest(f"the unit layer starts no {_program(args)}: tests/integration")
        _POPEN_INIT(self, args, *rest, **kwargs)

    monkeypatch.setattr(sandboxes, "get_sandbox", no_sandbox)
    monkeypatch.setattr(subprocess.Popen, "__init__", only_git)
