"""The `replicate` command group: one module per subcommand, errors as one line."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from rich.markup import escape

from replicate import __version__, scratch
from replicate.cli import explain, export, gen, grade, report, run, serve, validate
from replicate.cli.console import err_console
from replicate.envs import installer_choice
from replicate.errors import ReplicateError
from replicate.jail import sweep_cgroups

SUBCOMMANDS = (gen, explain, run, grade, validate, export, serve, report)


class _Parser(argparse.ArgumentParser):
    """argparse, each of its errors one line, as every other error of the command is (the usage
    it would print is a `--help` away)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {_one_line(message)} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="replicate",
        description="Turn real software into replication-training tasks and grade coding agents.",
    )
    parser.add_argument("--version", action="version", version=f"replicate {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    scratch.sweep()  # what an earlier process killed with SIGKILL left behind
    sweep_cgroups()  # and the jails' cgroups it could not remove
    scratch.install_signal_cleanup()  # SIGINT/SIGTERM remove this process's scratch first
    collect_less_often()
    try:
        installer_choice(os.environ)  # a bad setting refused before any work, not mid-run
        code: int = args.handler(args)
        return code
    except ReplicateError as exc:
        # One line whatever the message holds and however narrow the terminal: no wrapping.
        err_console().print(f"[bold red]error:[/] {escape(_one_line(str(exc)))}", soft_wrap=True)
        return exc.exit_code
    except KeyboardInterrupt:
        err_console().print("[bold red]interrupted[/]")
        return 130
    except Exception as exc:  # noqa: BLE001 - a bug of ours: one line, details on request
        if os.environ.get("REPLICATE_DEBUG"):
            traceback.print_exc()
        else:
            first = str(exc).splitlines()[0] if str(exc) else ""
            hint = "(set REPLICATE_DEBUG=1 for details)"
            print(f"internal error: {type(exc).__name__}: {first} {hint}", file=sys.stderr)
        return 70


# Gen, run and the reward server decode every jail's result frames into many small dicts and
# lists (~28 million over a more-itertools gen), nearly all freed by reference counting. At the
# cyclic collector's default thresholds (700, 10, 10) that meant ~40,000 young collections and
# ~60 full ones over that gen, each full one walking every live object: a sixth of gen's own
# CPU. With these, a few hundred young collections and two full ones; memory is unchanged
# (little of what gen frees is cyclic). Measured by `bench/gen_speed.py`.
COLLECTOR_THRESHOLDS = (50_000, 20, 1_000)


def collect_less_often() -> None:
    """Raise the cyclic garbage collector's thresholds for this process (see above)."""
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


def _one_line(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


if __name__ == "__main__":
    raise SystemExit(main())
