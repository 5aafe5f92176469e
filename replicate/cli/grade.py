"""`replicate grade --tasks DIR --task ID --candidate FILE`: one JSON verdict on stdout."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from replicate.batch import Batch
from replicate.cache import cache_root
from replicate.errors import ReplicateError
from replicate.grading import (
    MAX_CANDIDATE_BYTES,
    grade_text,
    refused,
    size_problem,
    with_repo_tests,
)
from replicate.jail import Jail, context_for, get_sandbox, sandbox_names

NO_VERIFY_HELP = "trust the batch as it is: skip checking its files against its manifest"
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
    p.add_argument("--no-verify", action="store_true", help=NO_VERIFY_HELP)
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    batch = Batch.open(args.tasks, verify=not args.no_verify)
    task = batch.load(args.task)
    try:  # no more than the grader takes: a bigger candidate is refused with reward 0 unread
        with args.candidate.open("rb") as handle:
            data = handle.read(MAX_CANDIDATE_BYTES + 1)
    except OSError as exc:
        raise ReplicateError(f"cannot read candidate {args.candidate}: {exc.strerror}") from None
    text = data.decode("utf-8", errors="replace")
    too_big = size_problem(text)
    if too_big:  # before the environment is built: refused at once
        print(refused(task, too_big).model_dump_json(indent=2))
        return 0
    sandbox = get_sandbox(args.sandbox)
    jail = Jail(context_for(task.repo, cache_root()), sandbox)
    verdict = grade_text(task, text, jail)
    if args.repo_tests:
        verdict = with_repo_tests(verdict, task, text, jail)
    print(verdict.model_dump_json(indent=2))
    return 3 if verdict.status == "infra_error" else 0
