"""`gen --repos FILE --kinds K` mints the kinds asked for in every repository: the options carry
them to each repository's job, the job (what an executor, Ray included, ships to a node) to the
child process, the child to the single-repository pipeline."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from replicate.cli import gen_many
from replicate.cli.main import build_parser, main
from replicate.core import TaskKind
from replicate.gen import DEFAULT_KINDS, ManyOptions
from replicate.gen.many import child, driver, job
from replicate.gen.many.ledger import RepoOutcome
from replicate.gen.many.pin import Pinned
from replicate.gen.many.placing import Placed
from replicate.gen.many.process import Ended
from replicate.gen.many.sources import Source

ALL = frozenset({TaskKind.FUNCTION, TaskKind.METHOD, TaskKind.CLASS})


def _options(monkeypatch: pytest.MonkeyPatch, *extra: str) -> ManyOptions:
    """The options `gen --repos` hands `mint_many`, caught before anything is minted."""
    seen: list[ManyOptions] = []

    class Caught(Exception):
        pass

    def caught(options: ManyOptions, *_: Any) -> None:
        seen.append(options)
        raise Caught

    monkeypatch.setattr(gen_many, "mint_many", caught)
    args = build_parser().parse_args(["gen", "--repos", "f", "--out", "o", *extra])
    with pytest.raises(Caught):
        args.handler(args)
    return seen[0]


def test_the_kinds_reach_the_options_of_every_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _options(monkeypatch).kinds == DEFAULT_KINDS
    assert _options(monkeypatch, "--kinds", "function,method,class").kinds == ALL


def test_a_kind_gen_cannot_mint_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for kinds, said in (("funcs", "unknown task kind 'funcs'"), ("class", "class needs method")):
        code = main(["gen", "--repos", "f", "--out", "o", "--kinds", kinds])
        err = capsys.readouterr().err.strip()
        assert code == 2 and said in err and "\n" not in err


def test_each_job_and_its_child_mint_those_kinds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    placed = Placed(Source("r", "r", None), Pinned(key="r", origin="o", commit="c"), "r", None)
    repo_job = driver._job(placed, ManyOptions(tmp_path / "f", tmp_path / "o", kinds=ALL))
    assert repo_job.kinds == ("class", "function", "method")
    assert pickle.loads(pickle.dumps(repo_job)) == repo_job  # as an executor ships it
    handed: list[child.ChildJob] = []

    def run_child(_: str, given: child.ChildJob, *__: Any) -> Ended:
        handed.append(given)
        return Ended(code=1, report=None, log_tail="", out_of_time=False)

    monkeypatch.setattr(job, "run_child", run_child)
    job._run_child(repo_job, tmp_path, tmp_path / "batch")
    (given,) = handed
    assert child.ChildJob.model_validate_json(given.model_dump_json()).kinds == repo_job.kinds
    minted: list[frozenset[TaskKind]] = []

    def mint(options: Any, _: Any) -> None:
        minted.append(options.kinds)
        raise ValueError("stop")

    monkeypatch.setattr(child, "mint", mint)
    child.run(given)
    assert minted == [ALL]


def test_a_repository_minted_with_other_kinds_is_minted_again() -> None:
    two = (TaskKind.FUNCTION, TaskKind.METHOD)  # what gen minted before kinds were recorded
    every = tuple(sorted(ALL))
    line = '{"source": "r", "status": "minted", "key": "r", "commit": "c"}'  # before kinds
    older = RepoOutcome.model_validate_json(line)
    assert older.kinds == two and older.done_at("r", "c", two)
    assert not older.done_at("r", "c", every)  # class asked for now: not done
    assert RepoOutcome(source="r", status="minted", key="r", commit="c", kinds=every).done_at(
        "r", "c", every
    )
