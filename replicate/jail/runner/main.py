"""The runner's entry: setup from ``argv[1]``, then a job (or a session) from stdin."""

from __future__ import annotations

import builtins
import sys
from typing import TYPE_CHECKING

from .base import _json_loads, _type
from .importing import _prepare
from .job import run
from .sessions import run_session

if TYPE_CHECKING:
    from .base import wire

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


def main() -> None:
    setup: wire.Setup = _json_loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    _prepare(setup if _type(setup) is dict else {})  # before any job or candidate exists
    stdin = sys.stdin.buffer
    job = _json_loads(stdin.readline())  # a warm jail parses it before its candidate exists
    if _type(job.get("session")) is dict:
        run_session(job["session"])
    nonce = stdin.read().strip()  # the rest, up to the end the host makes once it may start
    if nonce:
        job["nonce"] = nonce.decode("ascii", "replace")
    run(job)
