"""One repository's job for real: the child process, its failures, its time budget."""

from __future__ import annotations

import base64
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from replicate.acquire import acquire
from replicate.cache import cache_root
from replicate.core import DropReason, by_reason
from replicate.gen.many import child
from replicate.gen.many import job as job_module
from replicate.gen.many.job import SOFT_SHARE, RepoJob, mint_repo, pack, unpack
from replicate.gen.many.process import Ended, crash_reason
from tests.integration.minted import REPO_ROOT, Tiny, make_git_repo


def job_for(repo: Path, budget_s: float | None) -> RepoJob:
    pinned = acquire(str(repo), None, cache_root())
    return RepoJob(
        source=repo.name,
        spec=str(repo),
        commit=pinned.commit,
        key=pinned.key,
        origin=pinned.origin,
        limit=1,
        sandbox="local",
        workers=1,
        min_kill_rate=None,
        budget_s=budget_s,
    )


def test_an_error_of_gen_is_the_repositorys_failure(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "docs-only", {"README.md": "# no code here\n"})
    result = mint_repo(job_for(repo, None))
    assert result.outcome.status == "failed"
    assert result.outcome.stage == "gen"
    assert result.outcome.reason == f"no Python source files found in {repo}"
    assert result.archive == b""
    assert result.outcome.worker is not None and result.outcome.worker.pid == os.getpid()


def test_out_of_budget_the_child_is_stopped(tiny: Tiny) -> None:
    result = mint_repo(job_for(tiny.repo, 0.5))  # the tiny repository takes seconds to mint
    assert (result.outcome.stage, result.outcome.reason) == ("budget", "out of time after 0.5 s")
    assert result.outcome.seconds < 30  # stopped, not waited for


def test_past_its_soft_share_a_repository_starts_no_more_targets(tiny: Tiny) -> None:
    """Within the hard budget, gen stops starting targets after `SOFT_SHARE` of it and writes
    what it minted: the targets left are recorded as not started, not the repository lost."""
    job = job_for(tiny.repo, 600.0)
    handed = _handed(job)
    assert handed.soft_budget_s == 600.0 * SOFT_SHARE
    soon = handed.model_copy(update={"soft_budget_s": 1e-3, "limit": None})
    result = child.run(soon)  # the soft budget spent while the tests run, before any target
    assert result.error is None and result.funnel is not None and result.tasks == ()
    drops = by_reason(d for stage in result.funnel.stages for d in stage.drops)
    assert dict(drops)[DropReason.TIME_BUDGET_REACHED] > 0  # every traced target left


def _handed(job: RepoJob) -> child.ChildJob:
    """The options `mint_repo` hands its child (the child itself not started)."""
    seen: list[child.ChildJob] = []

    def caught(_module: str, handed: child.ChildJob, *_: object) -> Ended:
        seen.append(handed)
        return Ended(report=None, out_of_time=True)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(job_module, "run_child", caught)
        mint_repo(job)
    return seen[0]


def test_pack_and_unpack_keep_files_and_symlinks(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f.txt").write_text("x")
    (tmp_path / "a" / "link").symlink_to("b/f.txt")
    unpack(pack(tmp_path / "a"), tmp_path / "c")
    assert (tmp_path / "c" / "b" / "f.txt").read_text() == "x"
    assert os.readlink(tmp_path / "c" / "link") == "b/f.txt"


def test_a_minted_repository_comes_back_as_an_archive(tiny: Tiny, tmp_path: Path) -> None:
    result = mint_repo(job_for(tiny.repo, None))  # the positive control of the budget above
    outcome = result.outcome
    assert (outcome.status, outcome.key, len(outcome.tasks)) == ("minted", "tinypkg", 1)
    assert outcome.extracted == tiny.funnel.stages[0].count
    unpack(result.archive, tmp_path / "got")
    assert (tmp_path / "got" / "specs" / outcome.tasks[0] / "task.json").is_file()


def group_members(group: int) -> set[int]:
    found = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if os.getpgid(int(proc.name)) == group:
                    found.add(int(proc.name))
            except ProcessLookupError:
                continue
    return found


SLOW_SUITE = {  # gen runs this suite to harvest calls: the child is busy for minutes
    "slowpkg/__init__.py": "",
    "slowpkg/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": (
        "import time\nfrom slowpkg.core import add\n\n\n"
        "def test_add():\n    assert add(1, 2) == 3\n    time.sleep(600)\n"
    ),
}


def test_a_killed_parent_leaves_nothing_minting(tmp_path: Path) -> None:
    job = job_for(make_git_repo(tmp_path / "slowrepo", SLOW_SUITE), None)
    pickled = base64.b64encode(pickle.dumps(job)).decode("ascii")  # its kinds have no literal
    script = (
        "import base64, pickle; from replicate.gen.many.job import mint_repo; "
        f"mint_repo(pickle.loads(base64.b64decode({pickled!r})))"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    )
    try:
        child = _busy_child(parent.pid)
        minting = {child, *_descendants(child)}  # the harvest's sandbox among them
        parent.kill()
        parent.wait()
        # Without its watch the child would sleep for minutes. 20 s, not 5: once in a CI run
        # on 2 busy cores a sandbox process was still there after 5 s (cause not found).
        deadline = time.monotonic() + 20
        while (group_members(child) or _alive(minting)) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _alive(minting)
        assert not group_members(child) and not left, _described(left)
    finally:
        parent.kill()
        parent.wait()


def _busy_child(parent: int) -> int:
    """The parent's child once it has started processes of its own (positive control: the
    child has children: the harvest's sandbox, which runs in a session of its own)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for pid in _children(parent):
            if _children(pid):
                return pid
        time.sleep(0.2)
    raise AssertionError("the child never started its own processes")


def _descendants(pid: int) -> set[int]:
    found: set[int] = set()
    for kid in _children(pid):
        found |= {kid, *_descendants(kid)}
    return found


def _described(pids: set[int]) -> str:
    """Each process's command line and state, for a failure's message."""
    lines = []
    for pid in sorted(pids):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        lines.append(f"{pid} state {stat[stat.rfind(')') + 2]}: {command[:200]}")
    return "; ".join(lines)


def _alive(pids: set[int]) -> set[int]:
    """Those of `pids` still running (a zombie has exited)."""
    living = set()
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rfind(")") + 2] not in "ZX":
            living.add(pid)
    return living


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(n) for n in path.read_text().split()]
    except OSError:
        return []


def test_a_crash_says_how_and_the_telling_line() -> None:
    log = (
        "Fatal Python error: Segmentation fault\n\n"
        "Thread 0x1 (most recent call first):\n  <no Python frame>\n"
    )
    assert (
        crash_reason(-11, log)
        == "gen crashed (killed by SIGSEGV): Fatal Python error: Segmentation fault"
    )
    tb = "Traceback (most recent call last):\n  File x\nKeyError: 'a'\n"
    assert crash_reason(1, tb) == "gen crashed (exit code 1): KeyError: 'a'"
    assert crash_reason(3, "") == "gen crashed (exit code 3)"
    odd = "  File y\nhypothesis.errors.Unsatisfiable: no examples\n"
    assert (
        crash_reason(1, odd)
        == "gen crashed (exit code 1): hypothesis.errors.Unsatisfiable: no examples"
    )


def test_a_bug_of_gen_is_said_not_crashed_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*_: object) -> None:
        raise ValueError("459 of 459 examples were too large\nmore")

    monkeypatch.setattr(child, "mint", broken)
    job = child.ChildJob(
        repo="x",
        commit="c",
        key="x",
        out=tmp_path,
        limit=None,
        sandbox="local",
        workers=1,
        min_kill_rate=None,
    )
    result = child.run(job)
    assert result.error == "internal error: ValueError: 459 of 459 examples were too large"
