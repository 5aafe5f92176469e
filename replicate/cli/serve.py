"""`replicate serve --tasks DIR`: grade over HTTP (OpenRLHF's /get_reward, /grade, /metrics)."""

from __future__ import annotations

import argparse
import ipaddress
import os
from pathlib import Path
from typing import Any

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
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="grades at once")
    p.add_argument("--queue", type=int, default=64, help="grades that may wait; then 503")
    p.add_argument("--max-body-mb", type=float, default=16.0, help="largest request body")
    p.add_argument("--token", default=None, help=f"require 'Authorization: Bearer T' ({TOKEN_ENV})")
    p.add_argument("--sandbox", default="local", choices=sandbox_names())
    p.add_argument("--cold", action="store_true", help="start each jail on demand (no warm pool)")
    p.set_defaults(handler=handle)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, token: str | None) -> str | None:
    """What to say when the server is reachable beyond this machine without a token."""
    if token is not None or _loopback(host):
        return None
    return (
        f"listening on {host} without a token: anyone who can reach it can make this machine "
        "run code (set --token)"
    )


def handle(args: argparse.Namespace) -> int:
    import uvicorn

    from replicate.integrations import Grader
    from replicate.serve import ServeSettings, create_app

    if args.workers < 1 or args.queue < 0 or args.max_body_mb <= 0:
        raise ReplicateError("--workers must be >= 1, --queue >= 0 and --max-body-mb > 0")
    token = args.token or os.environ.get(TOKEN_ENV) or None
    warning = exposure_warning(args.host, token)
    if warning:
        err_console().print(f"[bold yellow]warning:[/] {warning}", soft_wrap=True)
    # a started jail per worker and a spare, per task, so a grade seldom waits for a start
    grader = Grader(
        args.tasks, sandbox=args.sandbox, warm=not args.cold, warm_per_key=args.workers + 1
    )
    settings = ServeSettings(
        workers=args.workers,
        queue=args.queue,
        max_body_bytes=int(args.max_body_mb * 1024 * 1024),
        token=token,
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
