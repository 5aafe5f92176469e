"""`replicate grade --tasks DIR --task ID --candidate FILE`: one JSON verdict on stdout."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replicate.batch.store import Batch
from replicate.cache import cache_root
from replicate.errors import ReplicateError
from replicate.harness.context import context_for
from replicate.harness.sandbox import get_sandbox, sandbox_names
from replicate.verifiers.grader import grade_text
from replicate.verifiers.repo_tests import with_repo_tests

REPO_TESTS_HELP = (
    "also run the repository's tests that called the target with the candidate in place "
    "(reported in the verdict; not part of the reward)"
)


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser("grade", help="grade one candidate for one task")
    p.add_argument("--tasks", required=True, type=Path, help="task batch directory")
    p.add_argument("--task", required=True, help="task id")
    p.add_argument("--candidate", required=True, type=Path, help="a whole target file or a def")
    p.add_argument("--sandbox", default="local", choices=sandbox_names())
    p.add_argument("--repo-tests", action="store_true", help=REPO_TESTS_HELP)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    batch = Batch.open(args.tasks)
    task = batch.load(args.task)
    try:
        data = args.candidate.read_bytes()
    except OSError as exc:
        raise ReplicateError(f"cannot read candidate {args.candidate}: {exc.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    sandbox = get_sandbox(args.sandbox)
    ctx = context_for(task.repo, cache_root())
    verdict = grade_text(task, text, ctx, sandbox)
    if args.repo_tests:
        verdict = with_repo_tests(verdict, task, text, ctx, sandbox)
    print(verdict.model_dump_json(indent=2))
    return 3 if verdict.status == "infra_error" else 0
