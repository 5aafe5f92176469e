"""The trusted side's adapter to the in-jail runner: the job, the view of the tree, infra errors."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from replicate.grading.grader import original_source
from replicate.jail.calls import (
    JAIL_ENV,
    RUNNER_PATH,
    JailRun,
    RepoContext,
    faketime_library,
    run_calls,
)
from replicate.jail.calltime import CallClock, timed_frames
from replicate.jail.frames import ParsedRun, collect_frames
from replicate.sandbox import get_sandbox
from replicate.sandbox.base import Sandbox, SandboxRequest, SandboxResult
from tests.integration.minted import CORE_PATH, Tiny

WRONG_CLAMP = b"\n\ndef clamp(value, low, high):\n    return 42\n"  # appended: redefines it


@dataclass
class Recording:
    """Delegates to a real sandbox and keeps each request, and what the tree looked like."""

    inner: Sandbox
    requests: list[SandboxRequest] = field(default_factory=list)
    seen: list[bytes] = field(default_factory=list)
    name: str = ""
    isolated: bool = False

    def __post_init__(self) -> None:
        self.name, self.isolated = self.inner.name, self.inner.isolated

    def run(self, request: SandboxRequest) -> SandboxResult:
        self.requests.append(request)
        self.seen.append((Path(request.cwd) / CORE_PATH).read_bytes())
        return self.inner.run(request)


def test_sys_path_and_mounts(tiny_ctx: RepoContext, tmp_path: Path) -> None:
    assert tiny_ctx.source_roots == ("src",)
    paths = tiny_ctx.sys_path(tmp_path)
    assert paths[0] == str((tmp_path / "src").resolve())
    assert all(
        p.startswith(str(tmp_path.resolve())) for p in paths[: -1 if tiny_ctx.meta else None]
    )
    mounts = {m.source: m for m in tiny_ctx.mounts()}
    assert str(tiny_ctx.env_root) in mounts and str(tiny_ctx.runner().parent) in mounts
    assert not any(m.writable for m in mounts.values())
    assert tiny_ctx.python.is_file() and tiny_ctx.site_packages.is_dir()
    no_meta = replace(tiny_ctx, meta=None, extra_paths=())
    assert no_meta.sys_path(tmp_path) == [str((tmp_path / "src").resolve())]
    with_meta = replace(tiny_ctx, meta=tmp_path / "meta")
    assert with_meta.sys_path(tmp_path)[-1] == str(tmp_path / "meta")
    assert str(tmp_path / "meta") in {m.source for m in with_meta.mounts()}


def test_the_runner_starts_compiled_unless_the_speedups_are_off(
    tiny: Tiny, tiny_ctx: RepoContext
) -> None:
    compiled = tiny_ctx.runner()
    assert compiled != RUNNER_PATH and compiled.suffix == ".pyc"
    assert tiny_ctx.cache is not None and compiled.is_relative_to(tiny_ctx.cache)
    source = replace(tiny_ctx, speedups=False)
    assert source.runner() == RUNNER_PATH and str(RUNNER_PATH.parent) in {
        m.source for m in source.mounts()
    }
    task = tiny.task("tinypkg.core.parse_int")
    runs = [
        run_calls(ctx, task.hidden.target, task.inputs, get_sandbox("local"), task.hidden.grading)
        for ctx in (tiny_ctx, source)
    ]
    untimed = [{i: {**o, "t": 0} for i, o in r.parsed.outcomes.items()} for r in runs]
    assert runs[0].parsed.done and len(untimed[0]) == len(task.inputs)
    assert untimed[0] == untimed[1]


def test_reference_run_reports_inputs_and_outcomes(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    task = tiny.task("tinypkg.core.parse_int")
    traced = [i for i in task.inputs if i.provenance == "traced"]
    sandbox = Recording(get_sandbox("local"))
    run = run_calls(
        tiny_ctx, task.hidden.target, traced, sandbox, task.hidden.grading, encode_inputs=True
    )
    assert run.started and run.parsed.ready and run.parsed.done and run.infra_problem() is None
    assert sorted(run.parsed.outcomes) == [0, 1, 2, 3]
    assert run.parsed.outcomes[0]["value"] == {"t": "int", "v": "12"}
    assert run.parsed.outcomes[0]["args_in"] == [{"t": "str", "v": "12"}]
    assert run.parsed.outcomes[2]["exc"]["type"] == "builtins.ValueError"

    request = sandbox.requests[0]
    *argv, setup = request.argv
    assert argv == [str(tiny_ctx.python), "-P", "-s", "-S", "-B", str(tiny_ctx.runner())]
    assert json.loads(setup)["sys_path"][0] == str(tiny_ctx.tree / "src")  # prepared before stdin
    assert dict(request.env) == {**JAIL_ENV, "PYTHONHASHSEED": "0"}
    assert request.channel and not request.network
    assert request.cwd == str(tiny_ctx.tree)
    line, nonce = request.stdin.split(b"\n")
    job = json.loads(line)
    assert job["module"] == "tinypkg.core" and job["qualname"] == "parse_int"
    assert job["kind"] == "function" and job["encode_inputs"] is True
    assert [i["i"] for i in job["inputs"]] == [0, 1, 2, 3]
    assert job["call_timeout_s"] == task.hidden.grading.call_timeout_s
    assert len(nonce) == 32 and job["channel_fd"] == 3 and "nonce" not in job
    assert nonce.decode() not in setup  # the nonce only reaches the runner's stdin, last


def test_generated_inputs_run_as_recipes(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    """A generated input is its seed call with some arguments replaced, built in the jail."""
    task = tiny.task("tinypkg.core.clamp")
    generated = [i for i in task.inputs if i.provenance != "traced"][:6]
    assert len(generated) == 6 and all(i.replaced for i in generated)
    run = run_calls(
        tiny_ctx,
        task.hidden.target,
        generated,
        get_sandbox("local"),
        task.hidden.grading,
        encode_inputs=True,
    )
    assert sorted(run.parsed.outcomes) == [i.index for i in generated]
    for item in generated:
        outcome = run.parsed.outcomes[item.index]
        for replacement in item.replaced:
            assert isinstance(replacement.slot, int)  # clamp's tests pass positional arguments
            assert outcome["args_in"][replacement.slot] == replacement.value
        assert outcome["status"] == task.expected[item.index]["status"]
        assert outcome.get("value") == task.expected[item.index].get("value")


def test_nonce_is_fresh_per_run(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    task = tiny.task("tinypkg.core.clamp")
    sandbox = Recording(get_sandbox("local"))
    for _ in range(2):
        run_calls(tiny_ctx, task.hidden.target, task.inputs[:1], sandbox, task.hidden.grading)
    nonces = {r.stdin.split(b"\n")[1] for r in sandbox.requests}
    assert len(nonces) == 2 and all(len(n) == 32 for n in nonces)


@pytest.mark.parametrize("backend", ["local", "plain"])
def test_override_replaces_only_the_target_file(
    tiny: Tiny, tiny_ctx: RepoContext, backend: str
) -> None:
    task = tiny.task("tinypkg.core.clamp")
    before = original_source(task)
    override = before + WRONG_CLAMP
    sandbox = Recording(get_sandbox(backend))
    run = run_calls(
        tiny_ctx, task.hidden.target, task.inputs, sandbox, task.hidden.grading, override=override
    )
    values = {i: o.get("value") for i, o in run.parsed.outcomes.items()}
    assert len(values) == len(task.inputs) > 4
    assert values == {i.index: {"t": "int", "v": "42"} for i in task.inputs}
    assert original_source(task) == before  # the pristine tree is untouched
    request = sandbox.requests[0]
    if backend == "plain":  # no isolation: a private copy of the tree with the file replaced
        assert request.cwd != str(tiny_ctx.tree)
        assert sandbox.seen[0] == override
        assert not Path(request.cwd).exists()  # and the copy is gone afterwards
    else:  # isolation: the candidate file is mounted over the target, read-only
        inside = str(tiny_ctx.tree / CORE_PATH)
        over = [m for m in request.mounts if m.target == inside]
        assert len(over) == 1 and not over[0].writable and over[0].source != inside
        assert request.mounts[-1] == over[0]  # after the tree's own mount


def _result(stderr: bytes = b"", channel: bytes = b"", code: int | None = 1) -> SandboxResult:
    return SandboxResult(
        exit_code=code, timed_out=False, duration_s=0.1, stderr=stderr, channel=channel
    )


def _parsed(channel: bytes) -> ParsedRun:
    """The channel as the trusted side reads it, no arrival noted (so no per-call limit)."""
    return collect_frames(timed_frames(channel, (), "n", CallClock(order=(), call_timeout_s=1.0)))


def test_infra_problem_names_the_last_stderr_line() -> None:
    run = JailRun(_parsed(b""), _result(stderr=b"first\nbwrap: no permission\n"))
    assert not run.started
    assert run.infra_problem() == "runner did not start in the sandbox: bwrap: no permission"
    silent = JailRun(_parsed(b""), _result(code=None))
    assert silent.infra_problem() == "runner did not start in the sandbox: exit code None"


def test_a_started_run_is_never_infra_even_if_it_dies() -> None:
    channel = b'n {"event": "started"}\n'
    run = JailRun(_parsed(channel), _result(stderr=b"Killed", code=-9))
    assert run.started and run.infra_problem() is None
    forged = JailRun(_parsed(b'other {"event": "started"}\n'), _result())
    assert not forged.started and forged.infra_problem() is not None


TODAY_CLAMP = (
    b"\n\nimport datetime\n\n"
    b"def clamp(value, low, high):\n    return datetime.date.today().toordinal()\n"
)


def test_a_shifted_clock_moves_wall_time(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    # gen's second golden run moves the clock ahead so clock-dependent outputs are dropped
    # (boltons' relative_time compares a doctest's utcnow() with the current time).
    assert faketime_library() is not None, "libfaketime is missing: scripts/install.sh adds it"
    task = tiny.task("tinypkg.core.clamp")
    source = original_source(task) + TODAY_CLAMP
    sandbox = get_sandbox("local")
    runs = [
        run_calls(
            tiny_ctx,
            task.hidden.target,
            task.inputs[:1],
            sandbox,
            task.hidden.grading,
            override=source,
            clock_shift_days=days,
        )
        for days in (0, 400)
    ]
    days = [int(next(iter(r.parsed.outcomes.values()))["value"]["v"]) for r in runs]
    assert days[1] - days[0] == 400
