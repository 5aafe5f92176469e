"""Candidates graded as children of sealed sessions (`replicate.jail.candidates`): the verdicts a
jail of their own gives, and nothing one candidate does reaches the next one's run.

Each defence is shown against a control: the same attack on a runner with that defence taken out
(a patched copy of the runner, `_without`), where it works.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from replicate.batch import LoadedTask
from replicate.errors import InfraError
from replicate.grading import grade_text, original_source
from replicate.jail import CandidateSessions, Jail, JailRun, RepoContext, get_sandbox
from replicate.jail import calls as calls_module
from replicate.jail.calls import RunPlan
from replicate.jail.runner.base import wire_beside
from replicate.jail.session import Session
from replicate.sandbox.base import WarmStart
from tests.integration.minted import Tiny

CLAMP = "tinypkg.core.clamp"

# What a child can reach of its session's process through /proc: its environment, its memory and
# its descriptors (the requests pipe among them).
PROBE = b"""

import os as _os


def _facts():
    found = []
    parent = _os.getppid()
    for name in ("environ", "mem", "fd"):
        try:
            if name == "fd":
                for fd in _os.listdir(f"/proc/{parent}/fd"):
                    _os.close(_os.open(f"/proc/{parent}/fd/{fd}", _os.O_RDONLY | _os.O_NONBLOCK))
            else:
                open(f"/proc/{parent}/{name}", "rb").close()
            found.append(name + ":open")
        except OSError:
            found.append(name + ":denied")
    return " ".join(found)


_FACTS = _facts()


def clamp(value, low, high):
    return _FACTS
"""

# Whether the file it was imported from (the host's copy, bound into the jail) takes writes.
WRITES_ITS_FILE = b"""

def _writes():
    try:
        with open(__file__, "ab") as handle:
            handle.write(b"#")
        return "writable"
    except OSError:
        return "read-only"


_WRITES = _writes()


def clamp(value, low, high):
    return _WRITES
"""

# Which of the host's session files (the host's compile of the candidate among them) it can
# write, found where the jail shows them.
WRITES_SESSION_FILES = b"""

import glob as _glob


def _written():
    found = []
    for path in sorted(_glob.glob("/tmp/replicate-session-*/*")):
        try:
            with open(path, "ab") as handle:
                handle.write(b"#")
            found.append(path.rsplit("/", 1)[-1] + " writable")
        except OSError:
            found.append(path.rsplit("/", 1)[-1] + " read-only")
    return ",".join(found)


_WRITTEN = _written()


def clamp(value, low, high):
    return _WRITTEN
"""

# Leaves a sleeper in a session of its own that ignores SIGTERM, and a chain of processes each
# forking the next and exiting (a sweep that lists pids once misses the newest).
LEAVES_PROCESSES = b"""

import os as _os
import signal as _signal
import time as _time


def _leave():
    if _os.fork() == 0:
        _os.setsid()
        _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
        if _os.fork() == 0:
            _time.sleep(60)
        _os._exit(0)
    if _os.fork() == 0:
        while True:
            if _os.fork():
                _os._exit(0)


_leave()
_time.sleep(0.2)
"""

# Counts the processes of the jail besides its init, its parent and itself.
COUNTS_PROCESSES = b"""

import os as _os


def clamp(value, low, high):
    mine = {1, _os.getpid(), _os.getppid()}
    return sum(1 for name in _os.listdir("/proc") if name.isdigit() and int(name) not in mine)
"""

# Ends its own run on the host early (its `exited` frame forged under its own nonce), then
# lingers writing bytes that are no frame, as the next run starts.
FORGES_ITS_END = b"""

import json as _json
import os as _os
import sys as _sys
import time as _time


def _forge():
    frame, request = _sys._getframe(), None
    while frame is not None and request is None:
        request = frame.f_locals.get("request")
        frame = frame.f_back
    job = request["job"]
    frame = {"event": "exited", "k": request["k"], "status": 0, "timed_out": False, "s": 0.1}
    _os.write(3, ("\\nx" + job["nonce"] + " " + _json.dumps(frame) + "\\n").encode())
    _time.sleep(1.0)
    _os.write(3, b"no frame at all " * 100)


_forge()
"""

# Wrong on about one call in four, which ones chosen by this process's heap address: the same in
# every child of one session, others in another process (right on most inputs, so it earns a
# reward and is run again).  The choice is a SHA-256 of the address and the call's number, so two
# processes pick the same calls with probability (1/16 + 9/16) ** N over N inputs.  It was
# Python's own `hash((address, number)) % 4`, whose low bits depend on the address so little that
# two processes could pick the same calls over all the task's 134 inputs (one CI run met it).
FOLLOWS_ITS_ADDRESS = b"""

import hashlib as _hashlib

_KEY = id(object()) >> 12
_SEEN = []


def clamp(value, low, high):
    _SEEN.append(1)
    if _hashlib.sha256(b"%d %d" % (_KEY, len(_SEEN))).digest()[0] % 4:
        return min(max(value, low), high)
    return "wrong"
"""

# Answers with this process's heap address.
ITS_ADDRESS = b"""

_KEY = id(object()) >> 12


def clamp(value, low, high):
    return _KEY
"""


class _OneSessionForBoth(CandidateSessions):
    """Candidate sessions that run the determinism check's second run where the first ran."""

    def run(self, *args: Any, **kwargs: Any) -> JailRun | None:
        return super().run(*args, **{**kwargs, "again": False})


def _local() -> WarmStart:
    sandbox = get_sandbox("local")
    assert isinstance(sandbox, WarmStart)
    return sandbox


@pytest.fixture
def clamp_task(tiny: Tiny) -> LoadedTask:
    return tiny.task(CLAMP)


@pytest.fixture
def forks() -> Iterator[CandidateSessions]:
    with CandidateSessions(_local()) as sessions:
        yield sessions


def _without(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, old: str, new: str) -> None:
    """Jails start a copy of the runner with `old` replaced by `new` in the one part that holds
    it (a defence taken out)."""
    source = Path(calls_module.RUNNER_PATH)
    copy = tmp_path / "jail" / "runner" / source.name
    shutil.copytree(source.parent, copy.parent, ignore=shutil.ignore_patterns("__pycache__"))
    holding = [part for part in copy.parent.glob("*.py") if old in part.read_text()]
    assert len(holding) == 1
    holding[0].write_text(holding[0].read_text().replace(old, new))
    shutil.copy(wire_beside(str(source)), wire_beside(str(copy)))
    monkeypatch.setattr(calls_module, "RUNNER_PATH", copy)


def _forked(
    forks: CandidateSessions,
    ctx: RepoContext,
    task: LoadedTask,
    program: bytes,
    *,
    again: bool = False,
    inputs: int = 1,
) -> JailRun | None:
    hidden = task.hidden
    return forks.run(ctx, hidden.target, task.inputs[:inputs], hidden.grading, program, again=again)


def _run(
    forks: CandidateSessions, ctx: RepoContext, task: LoadedTask, program: bytes, **options: Any
) -> JailRun:
    """`_forked`, which must give a run."""
    found = _forked(forks, ctx, task, program, **options)
    assert found is not None, "the session gave no run"
    return found


def _values(run: JailRun) -> list[object]:
    outcomes = run.parsed.outcomes
    return [outcomes[i].get("value", {}).get("v") for i in sorted(outcomes)]


def test_candidates_grade_alike_in_sessions_and_in_jails_of_their_own(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, forks: CandidateSessions
) -> None:
    original = original_source(clamp_task).decode()
    candidates = {
        "right": original,
        "wrong": original.replace("return low", "return high"),
        "does not parse": original.replace("def clamp", "def clamp("),
        "raises at import": original + "\nraise RuntimeError('no')\n",
        "exits at import": original + "\nimport os\nos._exit(0)\n",
        "kills its parent": original.replace(
            '"""Clamp value into [low, high]."""',
            '"""Clamp."""\n    import os, signal\n    os.kill(os.getppid(), signal.SIGKILL)',
        ),
    }
    forked = Jail(tiny_ctx, _local(), candidates=forks)
    alone = Jail(tiny_ctx, _local())
    for name, text in candidates.items():
        mine = grade_text(clamp_task, text, forked, shrink=False)
        theirs = grade_text(clamp_task, text, alone, shrink=False)
        got = (mine.reward, mine.status, mine.reason, mine.counts)
        assert got == (theirs.reward, theirs.status, theirs.reason, theirs.counts), name
        assert (mine.duration_s or 0) < clamp_task.hidden.grading.total_timeout_s, name
    assert grade_text(clamp_task, original, forked).reward == 1.0
    assert 2 <= forks.started < len(candidates)  # runs were served by sessions


def test_a_sealed_session_is_out_of_its_children_s_reach(
    clamp_task: LoadedTask,
    tiny_ctx: RepoContext,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    program = original_source(clamp_task) + PROBE
    with monkeypatch.context() as unsealed:  # the control: a runner that does not seal
        _without(
            unsealed,
            tmp_path,
            "def _seal() -> bool:\n",
            "def _seal() -> bool:\n    return True\n",
        )
        with CandidateSessions(_local()) as forks:
            control = _values(_run(forks, tiny_ctx, clamp_task, program))
    assert control == ["environ:open mem:open fd:open"]
    with CandidateSessions(_local()) as forks:
        sealed = _values(_run(forks, tiny_ctx, clamp_task, program))
    assert sealed == ["environ:denied mem:denied fd:denied"]


def test_a_candidate_cannot_write_the_host_s_copy_of_its_file(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, forks: CandidateSessions
) -> None:
    """The target's file in a session is a host file bound into the jail: gen's sessions copy
    each program into it from inside, so it is writable there (the control); for candidates the
    host writes it and it is read-only, as in a jail of their own (else a candidate could fill
    the host's disk through it)."""
    program = original_source(clamp_task) + WRITES_ITS_FILE
    hidden = clamp_task.hidden
    plan = RunPlan(tiny_ctx, hidden.target, hidden.grading, 0, 0)
    with Session(_local(), plan) as gens:
        (mutant,) = gens.run_all(clamp_task.inputs[:1], hidden.grading, [program])
    assert mutant is not None and _values(mutant) == ["writable"]
    assert _values(_run(forks, tiny_ctx, clamp_task, program)) == ["read-only"]
    assert _values(_run(forks, tiny_ctx, clamp_task, original_source(clamp_task))) == [
        clamp_task.expected[clamp_task.inputs[0].index]["value"]["v"]
    ]


def test_the_host_s_compile_of_a_candidate_is_read_only_in_its_jail(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, forks: CandidateSessions
) -> None:
    """The child takes the host's code for its file (`importing._shipped_code`) from a host file
    bound into the jail: read-only, so no candidate can hand the next one code of its own."""
    program = original_source(clamp_task) + WRITES_SESSION_FILES
    assert _values(_run(forks, tiny_ctx, clamp_task, program)) == ["current.code read-only"]


def test_nothing_a_child_left_meets_the_next_child(
    clamp_task: LoadedTask,
    tiny_ctx: RepoContext,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    leaves = original_source(clamp_task) + LEAVES_PROCESSES
    counts = original_source(clamp_task) + COUNTS_PROCESSES
    with monkeypatch.context() as untidy:  # the control: no sweep after a child
        _without(
            untidy,
            tmp_path,
            "    mine = {1, _getpid()}\n    for attempt",
            "    return\n    mine = {1, _getpid()}\n    for attempt",
        )
        with CandidateSessions(_local()) as forks:
            _run(forks, tiny_ctx, clamp_task, leaves)
            left = _values(_run(forks, tiny_ctx, clamp_task, counts))
    assert left[0] not in (None, "0"), left
    with CandidateSessions(_local()) as forks:
        _run(forks, tiny_ctx, clamp_task, leaves)
        assert _values(_run(forks, tiny_ctx, clamp_task, counts)) == ["0"]
        assert forks.started == 1  # the same session served both


def test_a_run_that_forges_its_end_reaches_no_other_run(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, forks: CandidateSessions
) -> None:
    original = original_source(clamp_task)
    forged = _run(forks, tiny_ctx, clamp_task, original + FORGES_ITS_END, inputs=5)
    assert forged.parsed.outcomes == {}  # the forged frame ended its own run on the host
    after = _run(forks, tiny_ctx, clamp_task, original, inputs=5)
    expected = [clamp_task.expected[item.index]["value"]["v"] for item in clamp_task.inputs[:5]]
    assert _values(after) == expected
    assert forks.started == 1


def test_the_second_run_of_a_candidate_is_in_another_session(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, forks: CandidateSessions
) -> None:
    probe = original_source(clamp_task) + ITS_ADDRESS
    first = _values(_run(forks, tiny_ctx, clamp_task, probe))
    assert _values(_run(forks, tiny_ctx, clamp_task, probe)) == first  # one session: alike
    assert _values(_run(forks, tiny_ctx, clamp_task, probe, again=True)) != first
    program = original_source(clamp_task) + FOLLOWS_ITS_ADDRESS
    verdict = grade_text(clamp_task, program.decode(), Jail(tiny_ctx, _local(), candidates=forks))
    assert verdict.reward == 0.0 and verdict.reason.startswith("nondeterministic"), verdict
    # the control: both runs in one session, the same candidate earns a reward
    with _OneSessionForBoth(_local()) as same:
        kept = grade_text(clamp_task, program.decode(), Jail(tiny_ctx, _local(), candidates=same))
    assert (kept.reward or 0.0) > 0.0, kept


def test_prepared_sessions_serve_a_grade_that_then_starts_no_jail(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, forks: CandidateSessions
) -> None:
    original, hidden = original_source(clamp_task).decode(), clamp_task.hidden
    with CandidateSessions(_local()) as unprepared:  # the control: the grade starts both itself
        jail = Jail(tiny_ctx, _local(), candidates=unprepared)
        assert grade_text(clamp_task, original, jail, shrink=False).reward == 1.0
        assert unprepared.started == 2
    jail = Jail(tiny_ctx, _local(), candidates=forks)
    jail.prewarm(hidden.target, clamp_task.inputs, hidden.grading)
    assert forks.started == 2  # the first run's session and the second's
    jail.prewarm(hidden.target, clamp_task.inputs, hidden.grading)
    assert forks.started == 2  # they wait idle: none more
    assert grade_text(clamp_task, original, jail, shrink=False).reward == 1.0
    assert (forks.started, forks.served) == (2, 2)


# Whether the by-value module was in the interpreter before the candidate was imported.
SEES_BY_VALUE = b"""

import sys as _sys

_LOADED = "replicate_cloudpickle" in _sys.modules


def clamp(value, low, high):
    return _LOADED
"""


def test_sessions_prepared_for_inputs_carried_by_value_load_that_module_before_any_run(
    clamp_task: LoadedTask, tiny_ctx: RepoContext
) -> None:
    """A grade whose inputs need the by-value module finds it loaded when its sessions were
    prepared for them (else the first run of each session waited while it loaded, ~30 ms)."""
    hidden = clamp_task.hidden
    seen = {}
    for by_value in (False, True):  # False: the control, loaded by no run of clamp's inputs
        with CandidateSessions(_local()) as forks:
            forks.prepare(tiny_ctx, hidden.target, hidden.grading, by_value=by_value)
            program = original_source(clamp_task) + SEES_BY_VALUE
            seen[by_value] = _values(_run(forks, tiny_ctx, clamp_task, program))
            assert (forks.started, forks.served) == (2, 1)
    assert seen == {False: [False], True: [True]}


def test_a_grade_s_sessions_are_prepared_by_value_where_its_inputs_need_it(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[bool] = []
    monkeypatch.setattr(
        CandidateSessions, "prepare", lambda *a, by_value=False, **k: asked.append(by_value)
    )
    hidden, plain = clamp_task.hidden, clamp_task.inputs[0]
    carried = plain.model_copy(
        update={"pickle_b64": base64.b64encode(b"replicate_cloudpickle").decode()}
    )
    with CandidateSessions(_local()) as forks:
        jail = Jail(tiny_ctx, _local(), candidates=forks)
        jail.prewarm(hidden.target, [plain], hidden.grading)
        jail.prewarm(hidden.target, [plain, carried], hidden.grading)
    assert asked == [False, True]


def test_two_attempts_prepared_in_turn_each_find_their_own_sessions_ready(
    clamp_task: LoadedTask, tiny_ctx: RepoContext, forks: CandidateSessions
) -> None:
    """Two attempts at tasks of one file, prepared one after the other and graded together:
    the second's prepare starts sessions of its own instead of counting on the first's idle
    ones, which the first attempt's grade takes (else one grade would start a jail)."""
    original, hidden = original_source(clamp_task).decode(), clamp_task.hidden
    first = Jail(tiny_ctx, _local(), candidates=forks)
    second = Jail(tiny_ctx, _local(), candidates=forks)
    first.prewarm(hidden.target, clamp_task.inputs, hidden.grading)
    second.prewarm(hidden.target, clamp_task.inputs, hidden.grading)
    assert forks.started == 4
    assert grade_text(clamp_task, original, first, shrink=False).reward == 1.0
    assert grade_text(clamp_task, original, second, shrink=False).reward == 1.0
    assert (forks.started, forks.served) == (4, 4)
    # given back after their runs, they are kept for nobody: a prepare without an owner takes them
    forks.prepare(tiny_ctx, hidden.target, hidden.grading)
    assert forks.started == 4  # idle sessions of the key wait, kept for nobody now


class _Refusing:
    """The local sandbox, except that no jail starts."""

    def __init__(self, inner: WarmStart) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def start(self, request: object) -> object:
        raise InfraError("no jail today")


def test_a_session_that_cannot_start_leaves_nothing_and_the_run_goes_to_a_jail(
    clamp_task: LoadedTask, tiny_ctx: RepoContext
) -> None:
    refusing = _Refusing(_local())
    before = set(os.listdir("/proc/self/fd"))
    folders = set(Path(tempfile.gettempdir()).glob("replicate-session-*"))
    with CandidateSessions(refusing) as forks:  # type: ignore[arg-type]
        for _ in range(3):
            assert _forked(forks, tiny_ctx, clamp_task, original_source(clamp_task)) is None
        assert forks.started == 3
    assert set(os.listdir("/proc/self/fd")) <= before  # no pipe left open
    assert set(Path(tempfile.gettempdir()).glob("replicate-session-*")) <= folders
    jail = Jail(tiny_ctx, _local(), candidates=CandidateSessions(refusing))  # type: ignore[arg-type]
    verdict = grade_text(clamp_task, original_source(clamp_task).decode(), jail)
    assert verdict.reward == 1.0  # graded in a jail of its own


def test_a_session_closed_twice_closes_its_pipe_once(
    clamp_task: LoadedTask, tiny_ctx: RepoContext
) -> None:
    """A session that died in a run is closed by the run's wait and again by its owner; the
    second close must not close what has taken the pipe's descriptor number since."""
    hidden = clamp_task.hidden
    session = Session(_local(), RunPlan(tiny_ctx, hidden.target, hidden.grading, 0, 0))
    session.close(kill=True)
    spare = os.open(os.devnull, os.O_RDONLY)  # the number, reused by something else
    if spare != session.writer:
        os.dup2(spare, session.writer)
        os.close(spare)
    try:
        session.close(kill=True)
        os.fstat(session.writer)  # still open: raises OSError if the close reached it
    finally:
        os.close(session.writer)
