"""The runner's wire format: what crosses between the trusted side and the in-jail runner.

One home for the contract both sides speak, imported by both: the host as
`replicate.jail.wire`, the runner (`runner/`, which cannot import `replicate` in the jail)
by loading this file shipped beside its own (`runner.wire_beside`).  So it needs the standard
library only, and imports nothing else.  The runner's docstring describes the protocol; this
module holds its names and shapes:

- the setup argument (`Setup`) and the job (`Job`, its `JobInput` items) the host sends;
- a recipe's tags (`RECIPE_TAG`, `CTOR_RECIPE_TAG`): the pickled tuple that describes a generated
  call, made by `replicate.inputs.recipes` and turned into the call by the runner; a call
  sequence's (`SEQUENCE_TAG`), made by `replicate.jail.sequences`, replayed by the runner;
- the frames the runner writes on its channel (`Frame`, one ``<nonce> <json>`` line each) and the
  ``event`` names; a ``result`` frame's `Outcome` and its ``status`` names; an `ExceptionRecord`;
- `Tagged`: one encoded value, a JSON object with a ``t`` tag (the runner's encoder makes them,
  `replicate.grading.compare` compares them).

The channel is untrusted (the candidate shares the runner's process): a frame read back is only
these shapes once `replicate.jail.frames` has checked it.

What any runner keeps (a second language's runner would speak this same wire):

- It is started with a `Setup` as its one argument, then reads one `Job` line (and the nonce)
  from stdin; it writes only on the channel fd (``channel_fd``), one ``<nonce> <json>`` line
  per `Frame`, each line in one write, never the nonce anywhere else. Its stdout and stderr are
  the candidate's and are never parsed.
- Frames come in this order: ``started`` (before any of the repository's code runs); then
  ``import_error`` (type, msg), after which the runner exits, or ``ready``; ``loaded`` once
  every input is decoded; for each input in the job's order, ``call`` (i) just before its call
  (none for an input that failed to load) and ``result`` (i, outcome), a result written with
  the next ``call`` frame; ``done``. Every input gets exactly one ``result`` with one of
  `STATUSES` (``until_timeout`` ends the run after the first timeout); an outcome that cannot
  be written is reported as ``runner_error``, never left out. A run whose frames stop early is
  judged by the host from what arrived (the host's clock decides timeouts:
  `replicate.jail.calltime`).
- Values are `Tagged`, encoded by exact type without running the value's own methods; the
  comparison on the host (`replicate.grading.compare`) knows the tags, so a new tag is a change
  of both sides and of the grader's version.
- It is given inputs, never an expected outcome, and must never be: nothing a candidate forges
  in the runner's process is worth more than computing the answer.
- It imports (or loads) nothing of ``replicate`` but this file, and no third-party package: it
  runs with the repository's interpreter (pyproject's import contracts hold this).
"""

from __future__ import annotations

from typing import Any, TypedDict

RECIPE_TAG = "replicate-recipe/1"  # (tag, seed, {position: value}, {keyword: value})
# (tag, seed, ctor, build, {position: value}, {keyword: value}, {position: value}, {keyword: value})
CTOR_RECIPE_TAG = "replicate-recipe/2"
# (tag, ((name, pickled (args, kwargs) or a recipe[, refs]), ...), recorded, None): a call
# sequence replayed on the job's target, a class (`replicate.jail.sequences`); `refs`:
# ((position or keyword, step index), ...), arguments fed an earlier step's result; `recorded`
# (the reference's check only, never a candidate's job): ((outcome, pickled result), ...) given
# back instead of replaying
SEQUENCE_TAG = "replicate-sequence/1"

STARTED = "started"  # before any code of the repository runs
READY = "ready"  # the target imported
IMPORT_ERROR = "import_error"
LOADED = "loaded"  # every input unpickled, before any call
CALL = "call"  # just before each call: the host times it from here
RESULT = "result"
DONE = "done"
EXITED = "exited"  # a session's program ended (written by the session's own process and nonce)
CALL_HEAD = '{"event":"' + CALL + '","i":'  # a call frame's text, up to its index: the host
# finds call frames by this text rather than parsing each as JSON (replicate.jail.calltime)

RETURNED = "returned"
RAISED = "raised"
TIMEOUT = "timeout"
LOAD_ERROR = "load_error"
RUNNER_ERROR = "runner_error"
STATUSES = frozenset({RETURNED, RAISED, TIMEOUT, LOAD_ERROR, RUNNER_ERROR})

Tagged = dict[str, Any]  # {"t": tag, ...}: one value, encoded by exact type

# A returned function whose name does not verify (a closure, a lambda, a partial of one), encoded
# by what it does: {"t": PROBED, "v": [probe, ...]}, each probe one call of it on arguments the
# runner draws from the input alone, {"t": PROBE, "args": [Tagged, ...], "v": Tagged} when it
# returned (a function it returns is not probed again) or {"t": PROBE, "args": [...], "raised":
# ExceptionRecord}.  Equal when every probe is; a timeout in a probe is the call's timeout.
PROBED = "probed"
PROBE = "probe"
MAX_PROBES = 12  # calls of one returned function
MAX_PROBED = 8  # returned functions probed in one returned value; the rest stay unverified refs

# An iterator among a call's arguments, in the arguments after the call, with the job's
# ``arg_reads``: {"t": "iter", "v": [...], "truncated": bool, READ: [at_return, after_result]},
# the items it had yielded when the call returned (or raised) and once the returned value was
# read; an iterator whose count the runner cannot read without consuming it has no READ.
READ = "read"
# In the arguments reported before the call (``args_in``, ``kwargs_in``): an argument that is
# the very object of an earlier one, {"t": SAME, "v": "args[0]"} (one iterator passed twice).
SAME = "same"


class ExceptionRecord(TypedDict):
    type: str  # the exception class's verified qualified name
    msg: str


class CallShown(TypedDict):
    """A recipe's class-call arguments, as the runner saw them before building ``self``."""

    args: list[Tagged]
    kwargs: dict[str, Tagged]


class Outcome(TypedDict, total=False):
    """One input's outcome: ``returned`` (value) or ``raised`` (exc), both with the arguments
    after the call and the runner's time ``t``; ``timeout`` (``host_clock`` when the host's clock
    decided); ``load_error`` or ``runner_error`` (msg).  With ``encode_inputs``, the arguments
    before the call too."""

    status: str
    value: Tagged
    exc: ExceptionRecord
    args: list[Tagged]
    kwargs: dict[str, Tagged]
    t: float
    msg: str
    host_clock: bool
    args_in: list[Tagged]
    kwargs_in: dict[str, Tagged]
    ctor_in: CallShown


class Frame(TypedDict, total=False):
    """One line of the channel: an ``event``; ``i`` and ``outcome`` for ``call`` and ``result``,
    ``type`` and ``msg`` for ``import_error``."""

    event: str
    i: int
    outcome: Outcome
    type: str
    msg: str


# The module name cloudpickle's file is loaded under in the harvest and the jail, which its
# by-value pickles name (replicate.jail.by_value_module).
BY_VALUE_MODULE = "replicate_cloudpickle"


class JobInput(TypedDict):
    i: int
    pickle_b64: str  # a pickled (args, kwargs), or a pickled recipe


class Preload(TypedDict):
    """What a session imports before its children (`replicate.jail.preload`)."""

    target: str  # the target's module: never imported here
    packages: list[str]  # the target's packages: made, their ``__init__`` run in each child
    modules: list[str]  # the modules to try, in order


class SessionSetup(TypedDict, total=False):
    """A jail that runs programs, a forked child each, as requests arrive
    (`replicate.jail.session`): a request is one line of JSON on ``requests_fd``, ``{"k",
    "program", "job", "timeout_s"}`` (the program's file, when named, is copied over ``file``;
    the job is run as the runner runs any, and once its child is gone an ``exited`` frame {"k",
    "status", "timed_out", "s"} is written under the job's nonce), ``{"kill": k}`` or
    ``{"end": true}``."""

    requests_fd: int  # a pipe's read end, inherited (no name in the jail)
    file: str  # the target's file, bound writable for gen's programs (the host writes candidates')
    channel_fd: int
    pid_residue: int  # each child's pid is this modulo PID_MODULUS (none: pids as they come)
    candidates: bool  # the programs are candidates': no session unless it can be sealed
    own_pids: bool  # the jail has a pid namespace of its own: kill(-1) sweeps it
    preload: Preload  # repository modules imported once, before the children
    code_file: str  # candidates': the host's compile of the file, when it can give one
    # the by-value module loaded before the repository's modules (the runs' inputs need it)
    by_value: bool


PID_MODULUS = 4  # sessions whose children are compared get residues that differ
UNSEALED_EXIT = 71  # a session's runner that cannot keep its children out of its reach
EXITED_MARK = "x"  # a session's ``exited`` frame: under this + the run's nonce, at a line start


class Job(TypedDict, total=False):
    """The first line of the runner's stdin (the nonce follows it, unless it holds one)."""

    nonce: str
    module: str
    qualname: str
    kind: str
    inputs: list[JobInput]
    call_timeout_s: float
    max_items: int
    max_arg_items: int  # iterator items of a call's arguments; max_items where absent
    arg_reads: bool  # how far the call and its result read each iterator argument (READ)
    max_depth: int
    max_bytes: int
    channel_fd: int
    encode_inputs: bool
    by_value: bool  # an input needs the by-value module (replicate.jail.by_value_module)
    session: SessionSetup  # run requests as they come instead of this job (the host's own only)
    until_timeout: bool  # end the run at its first timeout (a series of mutants)


class Setup(TypedDict, total=False):
    """The runner's argument: what it prepares before its job arrives."""

    sys_path: list[str]
    site_dirs: list[str]
    bytecode: list[str]  # compiled-code tables (replicate.jail.bytecode)
    by_value: str | None  # cloudpickle's module file, loaded for a job that needs it
