"""A naive in-process grader, built the way public graders are (docs/design.md §4), as the baseline
that every red-team attack must first beat: an attack that would not fool this grader tests nothing.

What makes it naive, on purpose:
- the candidate is imported into the process that holds the expected values (unpickled from a job
  file named on the command line and in the environment) and called directly;
- results are compared with ``==`` (``got == want``) and exceptions by class name;
- the per-call time limit is SIGALRM inside that process (as human-eval's ``time_limit``);
- per-case verdicts go to fd 3 as JSON lines (optionally prefixed by a nonce kept in memory), a
  results file is written at the end, ``PASS``/``FAIL`` is printed;
- the trusted side believes exit code 0 or a last ``PASS`` line on stdout/stderr, otherwise the
  results file, otherwise the verdicts on fd 3; it kills only its direct child on timeout and
  keeps all output (no caps);
- ``tree="workspace"`` grades inside the agent's workspace (SWE-style), with ``PYTHONPATH`` set to
  its import roots and the site machinery on; ``mode="pytest"`` writes a test file there and
  trusts pytest's exit code.

Run as a script it is the child (``check JOB``) or the expectation builder (``expect SPEC``), with
the standard library only.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import pickle
import re
import runpy
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).resolve()
GRACE_S = 2.0
# the recipe tags from the wire module's file, loaded as the runner loads it: this script's child
# runs under the repository's interpreter, where `replicate` is not importable
_WIRE = runpy.run_path(str(SCRIPT.parents[2] / "replicate" / "jail" / "wire.py"))
RECIPE_TAG: str = _WIRE["RECIPE_TAG"]
CTOR_RECIPE_TAG: str = _WIRE["CTOR_RECIPE_TAG"]


# Hidden inputs may carry a callable by value (replicate/jail/by_value_module.py): the children load
# cloudpickle's module file under the name those pickles use, as the runner does.
BY_VALUE_MODULE = "replicate_cloudpickle"
_LOAD_BY_VALUE = """
import importlib.util as _nv_util, os as _nv_os, sys as _nv_sys
if _nv_os.environ.get("NAIVE_BY_VALUE") and "replicate_cloudpickle" not in _nv_sys.modules:
    _nv_spec = _nv_util.spec_from_file_location(
        "replicate_cloudpickle", _nv_os.environ["NAIVE_BY_VALUE"]
    )
    _nv_mod = _nv_util.module_from_spec(_nv_spec)
    _nv_sys.modules["replicate_cloudpickle"] = _nv_mod
    _nv_spec.loader.exec_module(_nv_mod)
"""


def _dumps(obj: Any) -> bytes:
    """`pickle.dumps`, by value where the by-value module is loaded (a lambda input)."""
    module = sys.modules.get(BY_VALUE_MODULE)
    return bytes(module.dumps(obj, protocol=4)) if module is not None else pickle.dumps(obj)


class _NaiveTimeout(BaseException):
    pass


def _on_alarm(signum: int, frame: object) -> None:
    raise _NaiveTimeout()


def _check(got: Any, want: Any) -> bool:
    """The comparison, looked up by name at each call (as in most graders)."""
    return bool(got == want)


def _resolve(module: str, qualname: str) -> Callable[..., Any]:
    __import__(module)
    owner: Any = sys.modules[module]
    for part in qualname.split("."):
        owner = getattr(owner, part)
    return owner


def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    try:
        got = fn(*args, **kwargs)
        if isinstance(got, types.GeneratorType):
            got = list(got)
        return "returned", got
    except _NaiveTimeout:
        raise
    except Exception as exc:  # noqa: BLE001 - the outcome is whatever it raised
        return "raised", type(exc).__name__


def _run_case(fn: Callable[..., Any], case: dict[str, Any], limit: float) -> bool:
    args, kwargs = pickle.loads(base64.b64decode(case["input"]))
    expected = pickle.loads(base64.b64decode(case["expected"]))
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        outcome = _call(fn, tuple(args), kwargs)
    except _NaiveTimeout:
        return False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return outcome[0] == expected[0] and _check(outcome[1], expected[1])


def _child_check(job_path: str) -> None:
    with open(job_path, encoding="utf-8") as handle:
        job = json.load(handle)
    nonce = job.get("nonce")
    channel = os.fdopen(3, "w", buffering=1)
    fn = _resolve(job["module"], job["qualname"])
    oks = []
    for case in job["cases"]:
        ok = _run_case(fn, case, float(job["call_timeout"]))
        oks.append(ok)
        line = json.dumps({"i": case["index"], "ok": ok})
        channel.write((f"{nonce} " if nonce else "") + line + "\n")
    passed = sum(1 for ok in oks if ok)
    with open(os.environ["NAIVE_RESULTS"], "w", encoding="utf-8") as handle:
        handle.write(json.dumps({"passed": passed, "total": len(oks)}))
    print("PASS" if all(oks) else "FAIL", flush=True)
    sys.exit(0 if all(oks) else 1)


def _plain_call(data: bytes) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """`(args, kwargs)` from a hidden input's pickle: a plain call or a recipe (a seed call's
    pickle with some arguments replaced, and for a method maybe `self` built afresh from the
    class call that built it, as `replicate.inputs.recipes` makes them)."""
    loaded = pickle.loads(data)
    if type(loaded) is tuple and len(loaded) == 4 and loaded[0] == RECIPE_TAG:
        _, seed, positional, keywords = loaded
        return _replaced(pickle.loads(seed), positional, keywords)
    if type(loaded) is tuple and len(loaded) == 8 and loaded[0] == CTOR_RECIPE_TAG:
        _, seed, ctor, build, positional, keywords, c_positional, c_keywords = loaded
        args, kwargs = _replaced(pickle.loads(seed), positional, keywords)
        if build and args:
            c_args, c_kwargs = _replaced(pickle.loads(ctor), c_positional, c_keywords)
            args = (type(args[0])(*c_args, **c_kwargs), *args[1:])
        return args, kwargs
    args, kwargs = loaded
    return tuple(args), dict(kwargs)


def _replaced(
    call: Any, positional: dict[int, Any], keywords: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    args, kwargs = call
    args, kwargs = list(args), dict(kwargs)
    for position, value in positional.items():
        args[position] = value
    kwargs.update(keywords)
    return tuple(args), kwargs


def _child_expect(spec_path: str) -> None:
    """Run the reference on every input and write the job file (each input as a plain
    `(args, kwargs)` pickle, expected outcomes pickled)."""
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    fn = _resolve(spec["module"], spec["qualname"])
    cases = []
    for item in spec["inputs"]:
        args, kwargs = _plain_call(base64.b64decode(item["pickle_b64"]))
        given = base64.b64encode(_dumps((args, kwargs))).decode("ascii")  # before the call
        outcome = _call(fn, args, kwargs)
        blob = base64.b64encode(_dumps(outcome)).decode("ascii")
        cases.append({**_public(item), "input": given, "expected": blob})
    job = {k: spec[k] for k in ("module", "qualname", "call_timeout")}
    with open(spec["out"], "w", encoding="utf-8") as handle:
        json.dump({**job, "nonce": None, "cases": cases}, handle)


def _public(item: dict[str, Any]) -> dict[str, Any]:
    return {"index": item["index"], "stratum": item["stratum"]}


# ---------------------------------------------------------------- trusted side


@dataclass(frozen=True)
class NaiveTask:
    """What the naive grader needs of a task: where to import from and what to call."""

    module: str
    qualname: str
    target_path: str
    roots: tuple[str, ...]  # import roots relative to a tree ("src", "tests", ".")
    call_timeout: float


@dataclass(frozen=True)
class NaiveResult:
    reward: float
    exit_code: int | None
    timed_out: bool
    how: str  # what the grader believed: "exit 0", "PASS line", "results file", "channel"
    output: bytes = b""
    channel: bytes = b""
    child_pid: int = 0


@dataclass(frozen=True)
class NaiveOptions:
    mode: str = "script"  # or "pytest"
    call_timeout: float | None = None  # instead of the task's
    nonce: bool = False
    traced_only: bool = False
    timeout_s: float = 60.0
    env: Mapping[str, str] = field(default_factory=dict)
    python: str = sys.executable


def build_job(task: NaiveTask, tree: Path, inputs: Sequence[Any], out: Path) -> Path:
    """Expected outcomes of the reference in `tree` (pristine) on `inputs` (CallInput records)."""
    out = out.resolve()
    spec = {
        "module": task.module,
        "qualname": task.qualname,
        "call_timeout": task.call_timeout,
        "out": str(out),
        "inputs": [
            {"index": i.index, "stratum": i.stratum, "pickle_b64": i.pickle_b64} for i in inputs
        ],
    }
    spec_path = out.with_suffix(".spec.json")
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    env = _child_env(tree, task, Path(tempfile.gettempdir()), {})
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "expect", str(spec_path)],
        cwd=tree,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"naive expectation builder failed: {done.stderr[-2000:]!r}")
    return out


def grade_tree(
    task: NaiveTask, tree: Path, job: Path, options: NaiveOptions = NaiveOptions()
) -> NaiveResult:
    """Grade whatever `tree` holds (a repo tree with the candidate's target file in place)."""
    data = json.loads(job.read_text(encoding="utf-8"))
    if options.traced_only:
        data["cases"] = [c for c in data["cases"] if c["stratum"] == "traced"]
    data["nonce"] = secrets.token_hex(8) if options.nonce else None
    if options.call_timeout is not None:
        data["call_timeout"] = options.call_timeout
    scratch = Path(tempfile.mkdtemp(prefix="naive-"))
    job_copy = scratch / "job.json"
    job_copy.write_text(json.dumps(data), encoding="utf-8")
    results = scratch / "results.json"
    env = _child_env(tree, task, scratch, {**options.env, "NAIVE_RESULTS": str(results)})
    env["NAIVE_JOB"] = str(job_copy)
    if options.mode == "pytest":
        argv = _pytest_argv(tree, job_copy, task, options.python)
    else:
        argv = [options.python, str(SCRIPT), "check", str(job_copy)]
    ran = _run(argv, tree, env, options.timeout_s)
    indices = [c["index"] for c in data["cases"]]
    try:
        reward, how = _believe(ran, results, data["nonce"], indices)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return NaiveResult(reward, ran.exit_code, ran.timed_out, how, ran.output, ran.channel, ran.pid)


def grade_target(
    task: NaiveTask,
    pristine: Path,
    workspace: Path,
    job: Path,
    options: NaiveOptions = NaiveOptions(),
) -> NaiveResult:
    """Copy the pristine tree, put the workspace's target file in it (following symlinks, as a
    plain copy does) and grade that."""
    scratch = Path(tempfile.mkdtemp(prefix="naive-tree-"))
    tree = scratch / "tree"
    shutil.copytree(pristine, tree)
    try:
        shutil.copyfile(workspace / task.target_path, tree / task.target_path)
    except OSError:
        (tree / task.target_path).write_text("", encoding="utf-8")
    try:
        return grade_tree(task, tree, job, options)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _child_env(tree: Path, task: NaiveTask, home: Path, extra: Mapping[str, str]) -> dict[str, str]:
    roots = [str((tree / r).resolve()) for r in task.roots]
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(roots),
        "PYTHONDONTWRITEBYTECODE": "1",
        "NAIVE_BY_VALUE": _by_value_file(),
        **extra,
    }


def _by_value_file() -> str:
    from replicate.jail.by_value_module import module_file

    return module_file() or ""


_PYTEST_FILE = (
    _LOAD_BY_VALUE
    + """\
import base64, json, os, pickle, sys
import pytest
sys.path[:0] = {roots!r}
JOB = json.load(open(os.environ["NAIVE_JOB"]))
def _target():
    owner = __import__(JOB["module"], fromlist=["_"])
    for part in JOB["qualname"].split("."):
        owner = getattr(owner, part)
    return owner
@pytest.mark.parametrize("case", JOB["cases"], ids=lambda c: str(c["index"]))
def test_hidden(case):
    args, kwargs = pickle.loads(base64.b64decode(case["input"]))
    status, want = pickle.loads(base64.b64decode(case["expected"]))
    if status == "raised":
        with pytest.raises(Exception) as info:
            _target()(*args, **kwargs)
        assert type(info.value).__name__ == want
    else:
        got = _target()(*args, **kwargs)
        assert got == want
"""
)


def _pytest_argv(tree: Path, job: Path, task: NaiveTask, python: str) -> list[str]:
    roots = [str((tree / r).resolve()) for r in task.roots]
    test_file = tree / "test_naive_hidden.py"
    test_file.write_text(_PYTEST_FILE.format(roots=roots), encoding="utf-8")
    return [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test_file)]


def _high(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


@dataclass(frozen=True)
class _Ran:
    exit_code: int | None
    timed_out: bool
    output: bytes
    channel: bytes
    pid: int


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> _Ran:
    """Run the child with stdout+stderr merged and fd 3 as a pipe; kill only it on timeout."""
    read_fd, write_fd = (_high(fd) for fd in os.pipe())

    def place_channel() -> None:
        os.dup2(write_fd, 3)

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        close_fds=False,
        preexec_fn=place_channel,
    )
    os.close(write_fd)
    assert proc.stdout is not None
    out_fd = proc.stdout.fileno()
    sinks = {out_fd: bytearray(), read_fd: bytearray()}
    sel = selectors.DefaultSelector()
    for fd in sinks:
        sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    stop_at: float | None = None
    timed_out = False
    while sel.get_map() and (stop_at is None or time.monotonic() < stop_at):
        if stop_at is None and proc.poll() is not None:
            stop_at = time.monotonic() + GRACE_S
        elif stop_at is None and time.monotonic() > deadline:
            timed_out = True
            proc.kill()  # the direct child only: whatever it forked keeps running
            proc.wait()
            stop_at = time.monotonic() + GRACE_S
        for key, _ in sel.select(0.05):
            chunk = os.read(key.fd, 1 << 16)
            if chunk:
                sinks[key.fd] += chunk
            else:
                sel.unregister(key.fd)
    sel.close()
    os.close(read_fd)
    proc.stdout.close()
    code = proc.wait()
    return _Ran(
        None if timed_out else code,
        timed_out,
        bytes(sinks[out_fd]),
        bytes(sinks[read_fd]),
        proc.pid,
    )


def _believe(ran: _Ran, results: Path, nonce: str | None, indices: list[int]) -> tuple[float, str]:
    if ran.timed_out:
        return 0.0, "timeout"
    output, channel = ran.output, ran.channel
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if ran.exit_code == 0:
        return 1.0, "exit 0"
    if lines and lines[-1] == b"PASS":
        return 1.0, "PASS line"
    if results.is_file():
        try:
            counts = json.loads(results.read_text(encoding="utf-8"))
            return counts["passed"] / max(1, counts["total"]), "results file"
        except (ValueError, KeyError, TypeError):
            pass
    summary = re.search(rb"(\d+) passed", output)
    if summary and b"test_naive_hidden" in output:
        return int(summary.group(1)) / max(1, len(indices)), "pytest summary"
    return _from_channel(channel, nonce, indices), "channel"


def _from_channel(channel: bytes, nonce: str | None, indices: list[int]) -> float:
    oks: dict[int, bool] = {}
    prefix = f"{nonce} ".encode() if nonce else b""
    for line in channel.splitlines():
        if not line.startswith(prefix):
            continue
        try:
            record = json.loads(line[len(prefix) :])  # a RecursionError here takes us down
        except ValueError:
            continue
        if isinstance(record, dict) and "i" in record:
            oks[record["i"]] = record.get("ok") is True
    return sum(1 for i in indices if oks.get(i)) / max(1, len(indices))


if __name__ == "__main__":
    exec(_LOAD_BY_VALUE)
    {"check": _child_check, "expect": _child_expect}[sys.argv[1]](sys.argv[2])
