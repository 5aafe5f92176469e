"""A series: our own programs run one after the other in one jail, a forked child each
(`replicate.jail.series`), each giving what a jail of its own gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from replicate.batch.store import LoadedTask
from replicate.grading.grader import original_source
from replicate.jail.calls import JailRun, RepoContext, run_calls
from replicate.jail.series import forks_series, run_series
from replicate.jail.warm import WarmPool
from replicate.sandbox import get_sandbox
from tests.integration.minted import Tiny

# Appended to the original file: a later `def clamp` replaces the original.
WRONG = b"\n\ndef clamp(value, low, high):\n    return value\n"
# Wrong, and slow enough (10 ms a call) that the kill a run's first wrong answer sends reaches
# the jail long before the run could have answered every input on its own.
WRONG_SLOWLY = (
    b"\n\nimport time\n\ndef clamp(value, low, high):\n    time.sleep(0.01)\n    return value\n"
)
NO_IMPORT = b"\n\nraise ImportError('no such module today')\n"
LOOPS = b"\n\ndef clamp(value, low, high):\n    while True:\n        pass\n"
# Blocks the runner's alarm, then spins: only the series' limit on the program stops it.
DEAF = (
    b"\n\nimport signal\n\n"
    b"def clamp(value, low, high):\n"
    b"    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
    b"    while True:\n        pass\n"
)
EXITS = b"\n\nimport os\n\ndef clamp(value, low, high):\n    os._exit(3)\n"
# State in memory (another module's attribute) and in a file, and a process left running:
# what the next program would see if the session did not start each from a clean jail.
MARKS = (
    b"\n\nimport json, os, subprocess\n\n"
    b"def clamp(value, low, high):\n"
    b"    seen = [getattr(json, 'marked', False), os.path.exists('/tmp/mark')]\n"
    b"    seen.append(os.path.exists('/dev/shm/mark'))\n"
    b"    seen.append(len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
    b"    json.marked = True\n"
    b"    open('/tmp/mark', 'w').close()\n"
    b"    open('/dev/shm/mark', 'w').close()\n"
    b"    subprocess.Popen(['sleep', '600'], start_new_session=True)\n"
    b"    seen.append(os.path.exists('/tmp/mark'))\n"
    b"    return seen\n"
)
KILLS_THE_SERIES = b"\n\nimport os, signal\n\nos.kill(os.getppid(), signal.SIGKILL)\n"


def _outcomes(run: JailRun | None) -> dict[int, tuple[object, ...]]:
    """Each input's outcome without its timing (which differs between any two runs)."""
    assert run is not None
    shown = {}
    for index, outcome in run.parsed.outcomes.items():
        kept = {k: v for k, v in outcome.items() if k not in ("t", "host_clock")}
        shown[index] = tuple(sorted((k, repr(v)) for k, v in kept.items()))
    return shown


def _series(
    tiny: Tiny,
    ctx: RepoContext,
    tails: Sequence[bytes],
    *,
    until_timeout: bool = False,
    inputs: int | None = None,
    **change: float,
) -> tuple[LoadedTask, list[JailRun | None]]:
    task = tiny.task("tinypkg.core.clamp")
    settings = task.hidden.grading.model_copy(update=change)
    programs = [original_source(task) + tail for tail in tails]
    target, sandbox, chosen = task.hidden.target, get_sandbox("local"), task.inputs[:inputs]
    runs = run_series(ctx, target, chosen, sandbox, settings, programs, until_timeout=until_timeout)
    return task, runs


def test_each_program_of_a_series_gives_what_a_jail_of_its_own_gives(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    tails = [b"", WRONG, NO_IMPORT, EXITS, b""]
    task, runs = _series(tiny, tiny_ctx, tails)
    sandbox = get_sandbox("local")
    target, inputs, settings = task.hidden.target, task.inputs, task.hidden.grading
    alone = [
        run_calls(tiny_ctx, target, inputs, sandbox, settings, override=original_source(task) + t)
        for t in tails
    ]
    assert all(run is not None for run in runs)
    for ours, theirs in zip(runs, alone, strict=True):
        assert ours is not None
        assert _outcomes(ours) == _outcomes(theirs)
        assert ours.parsed.import_error == theirs.parsed.import_error
        assert ours.parsed.done == theirs.parsed.done
        assert ours.infra_problem() is None
    assert len(_outcomes(runs[0])) == len(inputs) and runs[0].parsed.done
    assert runs[2] is not None and "no such module today" in (runs[2].parsed.import_error or "")
    assert runs[3] is not None and runs[3].result.exit_code == 3 and not runs[3].parsed.done
    assert _outcomes(runs[0]) == _outcomes(runs[4])  # nothing of the programs between reached it


def test_each_program_finds_the_jail_as_a_fresh_one_would_be(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    # The first program's files and process are there once it has made them (the control:
    # its last check, and a call after the first seeing its own process), not in the next.
    _, runs = _series(tiny, tiny_ctx, [MARKS, MARKS], inputs=2)
    seen = []
    for run in runs:
        assert run is not None
        outcomes = run.parsed.outcomes
        seen += [[item["v"] for item in outcomes[i]["value"]["v"]] for i in sorted(outcomes)]
    first_call = seen[0]
    assert first_call[:3] == [False, False, False] and first_call[4] is True
    assert seen[1][:3] == [True, True, True]  # the same child, its second call
    assert int(seen[1][3]) > int(first_call[3])  # ... sees the process it left
    assert seen[2] == first_call  # the next child: as the first found the jail


@pytest.mark.parametrize("until_timeout", [True, False])
def test_a_program_that_loops_ends_at_its_first_timeout_and_the_series_goes_on(
    tiny: Tiny, tiny_ctx: RepoContext, until_timeout: bool
) -> None:
    _, runs = _series(
        tiny, tiny_ctx, [LOOPS, b""], until_timeout=until_timeout, inputs=4, call_timeout_s=0.2
    )
    looped, after = runs
    assert looped is not None and after is not None
    statuses = [o["status"] for o in looped.parsed.outcomes.values()]
    # one call's limit, not one per input; without `until_timeout` (the control), one per input
    assert statuses == ["timeout"] * (1 if until_timeout else 4)
    assert len(after.parsed.outcomes) == 4 and after.parsed.done


def test_a_program_deaf_to_the_alarm_is_killed_at_its_limit_and_the_series_goes_on(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    task, runs = _series(tiny, tiny_ctx, [DEAF, b""], call_timeout_s=0.2, total_timeout_s=2.0)
    deaf, after = runs
    assert deaf is not None and deaf.result.timed_out and not deaf.parsed.done
    assert after is not None and len(after.parsed.outcomes) == len(task.inputs)


@pytest.mark.parametrize("cut", [True, False])
def test_a_run_ends_at_the_first_result_until_holds_for_and_the_series_goes_on(
    tiny: Tiny, tiny_ctx: RepoContext, cut: bool
) -> None:
    from replicate.gen.strength import wrong_answer

    task = tiny.task("tinypkg.core.clamp")
    tails = (WRONG_SLOWLY, b"", WRONG_SLOWLY, b"")
    programs = [original_source(task) + tail for tail in tails]
    target, inputs, settings = task.hidden.target, task.inputs, task.hidden.grading
    until = wrong_answer(task.expected, settings) if cut else None
    runs = run_series(
        tiny_ctx, target, inputs, get_sandbox("local"), settings, programs, until=until
    )
    assert all(run is not None for run in runs)
    seen = [len(run.parsed.outcomes) for run in runs if run is not None]
    # The right programs answer every input either way; a wrong one stops soon after its first
    # wrong answer with `until` (the kill is sent as that answer arrives, while the run goes on),
    # and answers them all without it (the control).
    assert seen[1] == seen[3] == len(inputs)
    if cut:
        assert seen[0] < len(inputs) and seen[2] < len(inputs)
    else:
        assert seen[0] == seen[2] == len(inputs)


def test_a_closed_session_is_not_handed_out_again(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    from replicate.jail.series import FileSessions

    task = tiny.task("tinypkg.core.clamp")
    target, inputs, settings = task.hidden.target, task.inputs[:2], task.hidden.grading
    with FileSessions(get_sandbox("local"), tiny_ctx) as sessions:
        sessions.begin(target)
        first = sessions.seed_zero(target, settings)
        assert first is not None
        first.close(kill=True)  # as a run that came back None closes it
        assert sessions.seed_zero(target, settings) is None
        run = sessions.run(
            target,
            inputs,
            settings,
            None,
            hash_seed=0,
            clock_shift_days=0,
            encode_inputs=False,
            until=None,
        )
        assert run is None  # the caller runs it in a jail of its own


def test_programs_after_the_series_died_come_back_as_none(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    _, runs = _series(tiny, tiny_ctx, [b"", KILLS_THE_SERIES, b""])
    assert runs[0] is not None and runs[0].parsed.done
    assert runs[1:] == [None, None]


def test_the_parallel_series_keeps_the_programs_order(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    task = tiny.task("tinypkg.core.clamp")
    tails = [b"", WRONG, b"", WRONG, b""]
    programs = [original_source(task) + tail for tail in tails]
    target, inputs, settings = task.hidden.target, task.inputs, task.hidden.grading
    sandbox = get_sandbox("local")
    runs = run_series(tiny_ctx, target, inputs, sandbox, settings, programs, workers=2)
    right = _outcomes(runs[0])
    assert [_outcomes(run) == right for run in runs] == [True, False, True, False, True]


def test_only_bubblewrap_with_the_speedups_runs_a_series(tiny_ctx: RepoContext) -> None:
    assert forks_series(get_sandbox("local"), tiny_ctx)
    assert not forks_series(get_sandbox("local"), dataclasses.replace(tiny_ctx, speedups=False))
    assert not forks_series(get_sandbox("plain"), tiny_ctx)


# Parses, but does not compile (no binding for the nonlocal): refused by the jail's import.
NOT_COMPILING = "def clamp(value, low, high):\n    nonlocal value\n    return value\n"


@pytest.mark.parametrize("workers", [1, 2])
def test_mutants_graded_in_a_series_are_graded_as_in_warm_jails(
    tiny: Tiny, tiny_ctx: RepoContext, workers: int
) -> None:
    from replicate.gen.mutants import Mutant
    from replicate.gen.strength import run_mutants, task_mutants
    from replicate.jail import Jail

    task = tiny.task("tinypkg.core.clamp")
    found = [*task_mutants(task), Mutant(99, "does not compile", 1, NOT_COMPILING)]
    sandbox = get_sandbox("local")
    settings = task.hidden.grading
    args = (task.inputs, task.expected, settings, workers)
    in_series = run_mutants(task, found, Jail(tiny_ctx, sandbox), *args, first_wrong=True)
    cold = Jail(dataclasses.replace(tiny_ctx, speedups=False), sandbox)
    with WarmPool(sandbox) as pool:
        warm = run_mutants(task, found, cold.warm(pool), *args, first_wrong=True)
    assert len(found) >= 3
    assert [r.status for r in in_series] == [r.status for r in warm]
    assert any(r.status == "killed" for r in in_series)
    assert in_series[-1].status == "refused" and in_series[-1].killed
