"""`replicate serve --tasks DIR`: grade over HTTP (OpenRLHF's /get_reward, /grade, /metrics)."""

from __future__ import annotations

import argparse
import os
import socket
from pathlib import Path
from typing import Any

from replicate.cli import numbers
from replicate.cli.console import err_console
from replicate.errors import ReplicateError
from replicate.jail import sandbox_names

TOKEN_ENV = "REPLICATE_SERVE_TOKEN"


KEEP_ALIVE_S = 75


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "serve", help="serve rewards and verdicts over HTTP for a trainer"
    )
    p.add_argument("--tasks", required=True, type=Path, help="task batch directory")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    p.add_argument("--port", type=numbers.port, default=8000)
    p.add_argument(
        "--workers", type=numbers.count, default=os.cpu_count() or 1, help="grades at once"
    )
    p.add_argument(
        "--queue", type=numbers.amount, default=64, help="grades that may wait; then 503"
    )
    p.add_argument(
        "--max-body-mb", type=numbers.positive, default=16.0, help="largest request body"
    )
    p.add_argument("--token", default=None, help=f"require 'Authorization: Bearer T' ({TOKEN_ENV})")
    p.add_argument(
        "--allow-host-name",
        action="append",
        default=[],
        metavar="NAME",
        help="answer requests whose Host is NAME too (repeatable; else 421)",
    )
    p.add_argument("--sandbox", default="local", choices=sandbox_names())
    p.add_argument("--cold", action="store_true", help="start each jail on demand (no warm pool)")
    p.set_defaults(handler=handle)


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to listen beyond loopback without a token: anyone who could reach the server
    could make this machine run code."""
    from replicate.serve import is_loopback

    if token is None and not is_loopback(host):
        raise ReplicateError(
            f"refusing to listen on {host} without a token: anyone who can reach it could make "
            f"this machine run code (set --token or {TOKEN_ENV}, or listen on 127.0.0.1)"
        )


def can_listen(host: str, port: int) -> None:
    """A one-line error now where the address cannot be listened on (taken, not this machine's,
    not a name), rather than uvicorn's log line once the grader has started its jails.  Bound
    as uvicorn binds (address reuse on), then let go."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise ReplicateError(f"cannot listen on {host}:{port}: {exc}") from None
    family, kind, proto, _, address = found[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            raise ReplicateError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def handle(args: argparse.Namespace) -> int:
    import uvicorn

    from replicate.integrations import Grader
    from replicate.serve import HostCheck, ServeSettings, create_app

    token = args.token or os.environ.get(TOKEN_ENV) or None
    check_exposure(args.host, token)
    can_listen(args.host, args.port)
    # a started jail per worker and a spare, per task, so a grade seldom waits for a start
    grader = Grader(
        args.tasks, sandbox=args.sandbox, warm=not args.cold, warm_per_key=args.workers + 1
    )
    settings = ServeSettings(
        workers=args.workers,
        queue=args.queue,
        max_body_bytes=int(args.max_body_mb * 1024 * 1024),
        token=token,
        hosts=HostCheck(args.host, frozenset(args.allow_host_name)),
    )
    app = create_app(grader, settings)
    err_console().print(
        f"serving {len(grader.batch.ids)} task(s) on http://{args.host}:{args.port} "
        f"({args.workers} worker(s), queue {args.queue})"
    )
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
        # longer than a trainer's pause between batches: a pooled connection the server closes
        # just as the client reuses it fails that request (uvicorn's default is 5 s)
        timeout_keep_alive=KEEP_ALIVE_S,
    )
    return 0
