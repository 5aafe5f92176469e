"""`--executor local|ray [--ray-address ADDR]`, the options `gen --repos` and `run` share."""

from __future__ import annotations

import argparse

from replicate.executors import executor_names


def add_executor_arguments(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--executor",
        default="local",
        choices=executor_names(),
        help=f"{what}: local (this machine) or ray (a Ray cluster; a local one by default)",
    )
    p.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="with --executor ray: the cluster to join (default: start a local Ray instance)",
    )
