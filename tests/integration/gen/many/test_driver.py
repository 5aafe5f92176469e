"""`mint_many` with the in-memory executor: the repositories' results are made up (the tiny
batch packed as a minted repository, or a failure), everything around them is real."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from replicate.batch.difficulty_file import read_difficulty
from replicate.batch.store import Batch
from replicate.gen.ledger import read_entries
from replicate.gen.many import ledger
from replicate.gen.many.driver import ManyOptions, ManyReport, mint_many
from replicate.gen.many.job import JobResult, RepoJob, pack, unpack
from replicate.gen.many.ledger import LEDGER, RepoOutcome, read_ledger
from replicate.gen.many.merge import merge_repo
from replicate.gen.reasons import outcomes
from tests.integration.minted import Tiny, make_git_repo
from tests.unit.executors.fake import FakeExecutor

Work = Callable[[RepoJob], JobResult]


def fake_work(tiny: Tiny, failing: str) -> Work:
    """Sources whose text holds `failing` fail in gen; the others mint the tiny batch."""
    archive = pack(tiny.batch_dir)

    def work(job: RepoJob) -> JobResult:
        if failing in job.source:
            reason = "no functions or methods to mint"
            failed = RepoOutcome(
                source=job.source, status="failed", key=job.key, stage="gen", reason=reason
            )
            return JobResult(failed, b"")
        minted = RepoOutcome(
            source=job.source,
            status="minted",
            key=job.key,
            commit=job.commit,
            tasks=tiny.task_ids,
            extracted=8,
            validated=4,
            kill_rates=(1.0, 0.5, 0.75),
            licence="MIT",
            kinds=job.kinds,  # as `job.py` records them
        )
        return JobResult(minted, archive)

    return work


@pytest.fixture
def repos_file(tiny: Tiny, tmp_path: Path) -> Path:
    make_git_repo(tmp_path / "empty", {"README": "no code\n"})
    path = tmp_path / "repos.txt"
    path.write_text(f"{tiny.repo}\n# a comment\n./empty\n./missing\n")
    return path


def mint(repos_file: Path, out: Path, work: Work) -> tuple[ManyReport, FakeExecutor]:
    fake = FakeExecutor(work)
    return mint_many(ManyOptions(repos_file=repos_file, out=out), fake), fake


def test_mints_records_each_failure_and_writes_the_card(
    tiny: Tiny, repos_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "batch"
    report, fake = mint(repos_file, out, fake_work(tiny, "empty"))
    assert [job.source for job in fake.items] == [str(tiny.repo), "./empty"]
    assert Batch.open(out).ids == tuple(sorted(tiny.task_ids))  # the manifest covers them
    card = report.card
    assert [(r.source, r.status, r.tasks) for r in card.repositories] == [
        (str(tiny.repo), "minted", len(tiny.task_ids)),
        ("./empty", "failed", 0),
        ("./missing", "failed", 0),
    ]
    assert card.repositories[1].failure == "gen: no functions or methods to mint"
    assert (card.repositories[2].failure or "").startswith("set-up: no such repository")
    assert card.repositories[0].yield_rate == 0.5
    assert card.repositories[0].kill_rate_median == 0.75
    assert (card.totals.minted, card.totals.failed, card.totals.tasks) == (1, 2, 4)
    assert card.totals.licences == (("MIT", 1),)
    text = (out / "CARD.md").read_text()
    assert "1 of 3 repositories minted, 2 failed" in text
    assert "failed (gen: no functions or methods to mint)" in text
    assert (out / "card.json").is_file()
    measured, minted = read_difficulty(out), read_difficulty(tiny.batch_dir)
    assert measured is not None and minted is not None
    assert measured.tasks == minted.tasks  # the repository's measures, carried by the merge
    assert card.totals.bands == card.repositories[0].bands == tuple(measured.bands().items())
    assert "## Difficulty" in text
    # the repository's ledger of targets, carried by the merge: `explain` reads it
    assert read_entries(out) == read_entries(tiny.batch_dir) != []
    assert {o.symbol for o in outcomes(out)} == {e.symbol for e in read_entries(out)}


def test_merging_a_repository_again_replaces_its_ledger_lines(tiny: Tiny, tmp_path: Path) -> None:
    out = tmp_path / "batch"
    for round_ in range(2):
        staged = tmp_path / f"staged{round_}"
        unpack(pack(tiny.batch_dir), staged)
        merge_repo(out, staged, read_entries(tiny.batch_dir)[0].repo)
    assert read_entries(out) == read_entries(tiny.batch_dir)  # once, not twice
    assert Batch.open(out).ids == tuple(sorted(tiny.task_ids))


def test_a_rerun_skips_what_is_minted_and_retries_the_failures(
    tiny: Tiny, repos_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "batch"
    mint(repos_file, out, fake_work(tiny, "empty"))
    again, fake = mint(repos_file, out, fake_work(tiny, "nothing fails"))
    assert [job.source for job in fake.items] == ["./empty"]
    assert again.skipped == (str(tiny.repo),)
    assert again.card.totals.minted == 2  # ./empty minted this time (the made-up tiny batch)
    assert read_ledger(out)["./missing"].stage == "set-up"


def test_a_new_grader_version_mints_again(
    tiny: Tiny, repos_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "batch"
    mint(repos_file, out, fake_work(tiny, "empty"))
    monkeypatch.setattr(ledger, "GRADER_VERSION", "replicate-grader/999")
    _, fake = mint(repos_file, out, fake_work(tiny, "empty"))
    assert [job.source for job in fake.items] == [str(tiny.repo), "./empty"]
    assert Batch.open(out).ids == tuple(sorted(tiny.task_ids))  # replaced, not doubled


def test_tasks_gone_from_the_batch_are_minted_again(
    tiny: Tiny, repos_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "batch"
    mint(repos_file, out, fake_work(tiny, "empty"))
    (out / "specs" / tiny.task_ids[0] / "task.json").unlink()
    _, fake = mint(repos_file, out, fake_work(tiny, "empty"))
    assert str(tiny.repo) in [job.source for job in fake.items]


def test_a_torn_ledger_line_is_ignored(tiny: Tiny, repos_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "batch"
    mint(repos_file, out, fake_work(tiny, "empty"))
    with (out / LEDGER).open("a") as handle:
        handle.write('{"source": "./empty", "status": "mint')  # killed while writing
    _, fake = mint(repos_file, out, fake_work(tiny, "empty"))
    assert [job.source for job in fake.items] == ["./empty"]


def test_one_repository_listed_twice_is_minted_once(tiny: Tiny, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(tiny.repo)
    path = tmp_path / "repos.txt"
    path.write_text(f"{tiny.repo}\n./alias\n")
    report, fake = mint(path, tmp_path / "batch", fake_work(tiny, "empty"))
    assert len(fake.items) == 1
    assert (report.card.repositories[1].failure or "").startswith(
        f"set-up: tinypkg is already minted from {tiny.repo}"
    )


def slow_tree(root: Path, links: int = 8000) -> Path:
    """A plain folder slow to snapshot: each symlink's target text is hashed by a git process
    of its own (tens of seconds here, more than the budget below)."""
    root.mkdir()
    (root / "mod.py").write_text("def f():\n    return 1\n")
    for n in range(links):
        os.symlink("mod.py", root / f"link{n}")
    return root


def test_a_source_that_cannot_be_acquired_fails_alone(tiny: Tiny, tmp_path: Path) -> None:
    """`/` (refused), a tree whose snapshot outlives the budget (stopped): each its own set-up
    failure; the tiny repository is minted. Acquiring runs in a child within the budget."""
    slow = slow_tree(tmp_path / "slow")
    path = tmp_path / "repos.txt"
    path.write_text(f"/\n{slow}\n{tiny.repo}\n")
    options = ManyOptions(repos_file=path, out=tmp_path / "batch", repo_budget_s=12.0)
    fake = FakeExecutor(fake_work(tiny, "nothing fails"))
    report = mint_many(options, fake)
    assert [job.source for job in fake.items] == [str(tiny.repo)]
    rows = {r.source: r for r in report.card.repositories}
    assert (
        rows["/"].failure == "set-up: cannot snapshot /: the file system's root is not a repository"
    )
    assert rows[str(slow)].failure == f"set-up: out of time after 12 s while acquiring {slow}"
    assert rows[str(tiny.repo)].status == "minted"
    assert fake.items[0].budget_s is not None and fake.items[0].budget_s < 12.0  # what is left


def test_a_source_minted_under_another_name_before_is_replaced(tiny: Tiny, tmp_path: Path) -> None:
    """A batch minted when a repository was named by its folder: the source's tasks under the
    old name leave the batch when it is minted under its project's name."""
    out = tiny.copy_batch(tmp_path / "batch")
    renamed = make_git_repo(tmp_path / "renamed", {"pyproject.toml": '[project]\nname = "new"\n'})
    old = RepoOutcome(
        source=str(renamed),
        status="minted",
        key=tiny.funnel.repo,
        commit=tiny.funnel.commit,
        tasks=tiny.task_ids,
    )
    ledger.append_ledger(out, [old])
    path = tmp_path / "repos.txt"
    path.write_text(f"{renamed}\n")
    assert Batch.open(out).ids == tuple(sorted(tiny.task_ids))  # positive control: held
    report, fake = mint(path, out, fake_work(tiny, "renamed"))
    assert [job.key for job in fake.items] == ["new"]
    assert report.card.repositories[0].failure == "gen: no functions or methods to mint"
    assert Batch(out).ids == ()  # the old name's tasks are gone with its snapshot
    assert not list((out / "reference_impls" / "_repos").iterdir())
    assert read_entries(out) == []
