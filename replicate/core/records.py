"""Frozen, typed records passed between stages and processes.

These are the public contracts of docs/design.md §1 (task spec, verdict, result row) and the hidden,
trusted-side records of a task.  They carry data only; the logic that acts on them lives elsewhere.
Every record is a frozen pydantic model so that it validates on load and publishes a JSON Schema
(`replicate.batch.schemas` writes them to `specs/*.schema.json`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from replicate.core.drops import DropReason

SCHEMA_VERSION = "1"

# What a target is: a function, one of a class's methods by how it is bound, a class or a file.
CallKind = Literal["function", "method", "classmethod", "staticmethod", "class", "module"]
Stratum = Literal["traced", "widened", "edge", "raises"]
Provenance = Literal["traced", "widened", "edge"]
Language = Literal["python", "javascript", "typescript"]  # what a task's target is written in
VerdictStatus = Literal["graded", "violation", "infra_error"]
AgentStatus = Literal["ok", "error", "timeout", "disk_quota_exceeded", "budget_exhausted"]


class TaskKind(StrEnum):
    """What a task asks to build: one function, one method, every method of one class, or every
    function and method body of one file (`module`).  A batch minted before task kinds reads as
    function or method, from its target's kind (`TaskKind.of`)."""

    FUNCTION = "function"
    METHOD = "method"
    CLASS = "class"
    MODULE = "module"

    @classmethod
    def of(cls, kind: CallKind) -> TaskKind:
        """The task kind of a target of this kind."""
        wholes = {"function": cls.FUNCTION, "class": cls.CLASS, "module": cls.MODULE}
        return wholes.get(kind, cls.METHOD)

    @classmethod
    def parse(cls, text: str) -> frozenset[TaskKind]:
        """`function,method,class`: the kinds named; ValueError naming the first unknown one."""
        names = [name.strip() for name in text.split(",") if name.strip()]
        known = {kind.value for kind in cls}
        wrong = [name for name in names if name not in known] or ([] if names else [text])
        if wrong:
            choices = ", ".join(kind.value for kind in cls)
            raise ValueError(f"unknown task kind {wrong[0]!r} (choose from {choices})")
        return frozenset(cls(name) for name in names)


class Record(BaseModel):
    """Base of every record: frozen, no unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Span(Record):
    """A byte range of a source file, with 1-based inclusive line numbers for humans."""

    start_byte: int
    end_byte: int
    start_line: int
    end_line: int


class Source(Record):
    """Where a task's target lives: repository key, pinned commit, file and dotted symbol."""

    repo: str = Field(description="Repository key: normalised URL, or a local folder's name.")
    commit: str = Field(description="Full hex commit id the task is pinned to.")
    path: str = Field(description="Repo-relative POSIX path of the file that holds the target.")
    symbol: str = Field(
        description="Module-qualified dotted name: pkg.mod.func or pkg.mod.Cls.meth."
    )


class Target(Record):
    """One extracted function, method or class: everything needed to stub, splice and call it.

    A class (`kind` "class") is called through its `members`: each method it defines whose body
    is hidden with the others; its own `body_span` runs from the first member's body to the
    last's, and `signature` is its decorators and `class` line.  A module (`kind` "module") is
    called the same way: its members are the file's functions and methods, its `qualname` the
    module's last name, its symbol the module's dotted name (`languages/python_modules.py`)."""

    path: str
    module: str
    qualname: str
    kind: CallKind
    signature: str = Field(description="Source text of the decorators and the def line(s).")
    docstring: str | None = None
    class_name: str | None = None
    decorators: tuple[str, ...] = ()
    is_async: bool = False
    is_generator: bool = False
    def_span: Span = Field(description="The whole (decorated) definition.")
    body_span: Span = Field(
        description="What the stub replaces: from the first statement after the docstring "
        "to the end of the body."
    )
    body_indent: str = Field(description="Indentation of the body's statements ('' if inline).")
    body_statements: int = Field(description="Statements in the body, docstring excluded.")
    members: tuple[Target, ...] = Field(
        default=(),
        description="A class's methods, or a module's functions and methods, hidden at once, in "
        "source order (empty for the others).",
    )

    @property
    def symbol(self) -> str:
        return self.module if self.kind == "module" else f"{self.module}.{self.qualname}"

    @property
    def task_kind(self) -> TaskKind:
        return TaskKind.of(self.kind)

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


class SkippedFile(Record):
    path: str
    reason: str


class StratumWeights(Record):
    """How much each stratum counts in the reward (see `replicate.grading.reward`)."""

    traced: float = 1.0
    widened: float = 1.0
    edge: float = 0.5
    raises: float = 0.5


class GradingSettings(Record):
    """How a candidate is run and compared; recorded per task so grading is reproducible."""

    call_timeout_s: float = 2.0
    total_timeout_s: float = 60.0
    float_rel_tol: float = 1e-9
    float_abs_tol: float = 0.0
    compare_exception_message: bool = False
    max_items: int = 10_000
    max_arg_items: int | None = Field(
        default=None,
        description="Items kept of an iterator among a call's arguments after the call; None "
        "(batches minted before grader 6) = max_items.",
    )
    arg_reads: bool = Field(
        default=False,
        description="Whether the outcomes say, and the comparison takes into account, how many "
        "items each iterator argument had yielded when the call returned and once its result "
        "was read; False for batches minted before grader 7.",
    )
    max_depth: int = 64
    max_bytes: int = 262_144
    memory_mb: int = 1024
    stratum_weights: StratumWeights | None = Field(
        default=None,
        description="Weights of the strata; None (batches minted before strata) = every input "
        "counts the same.",
    )

    @property
    def arg_items(self) -> int:
        """Items kept of an iterator among a call's arguments after the call."""
        return self.max_items if self.max_arg_items is None else self.max_arg_items


class Replacement(Record):
    """One argument of a generated input: a positional index or a keyword, and its tagged value."""

    slot: int | str
    value: dict[str, Any]


class CallInput(Record):
    """One hidden input, trusted -> jail: a pickled `(args, kwargs)` (self first), or a JS call."""

    index: int
    stratum: Stratum = "traced"
    origin: str = Field(default="", description="Where it came from, e.g. the test node id.")
    call: str = Field(default="", description="A short rendering of the call, for feedback.")
    pickle_b64: str = Field(default="", description="'' for a JS task: its call is `node_call`.")
    node_call: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    provenance: Provenance = Field(
        default="traced", description="Recorded from the tests, or generated (widened, edge)."
    )
    replaced: tuple[Replacement, ...] = Field(
        default=(), description="For a generated input: the arguments that differ from its seed."
    )
    visible: bool = Field(
        default=True,
        description="A traced call made straight from test code or a doctest, which the agent "
        "can read in the workspace; False: a call made inside the library while a test ran, "
        "or a generated input.",
    )
    member: str | None = Field(
        default=None,
        description="For a class or module task: the qualname of the member this input calls; "
        "None for a function or method task.",
    )


class Example(Record):
    """A call shown in TASK.md: not among the hidden inputs."""

    call: str
    outcome: str


class TaskSpec(Record):
    """The public `specs/<id>/task.json`: what an agent may see."""

    schema_version: str = SCHEMA_VERSION
    id: str
    language: Language = "python"
    source: Source
    kind: CallKind
    signature: str
    docstring: str | None = None
    prompt: str = "TASK.md"
    examples: tuple[Example, ...] = ()
    hidden_inputs: int = Field(description="How many hidden inputs grade this task.")
    body_statements: int

    @property
    def task_kind(self) -> TaskKind:
        return TaskKind.of(self.kind)


class Validation(Record):
    reference_reward: float
    stub_reward: float
    dropped_nondeterministic: int = 0


class DegenerateScore(Record):
    """The raw reward of one degenerate program (`return None`, `raise ValueError`, ...)."""

    program: str
    raw_reward: float


class Baseline(Record):
    """What degenerate programs earn on a task; rewards are normalised against `raw_reward`."""

    raw_reward: float = Field(description="The best raw reward among the degenerate programs.")
    programs: tuple[DegenerateScore, ...] = ()


class HiddenTask(Record):
    """`reference_impls/<id>/task.json`: the trusted side of one task."""

    schema_version: str = SCHEMA_VERSION
    id: str
    repo_dir: str = Field(
        description="Folder under reference_impls/_repos/ with snapshot and lock."
    )
    source: Source
    target: Target
    grading: GradingSettings
    validation: Validation
    grader_version: str
    baseline: Baseline | None = Field(
        default=None, description="None (batches minted before normalisation): no normalising."
    )
    strength: Strength | None = Field(
        default=None, description="Mutant kill rate; None: minted without a strength check."
    )


class RepoRecord(Record):
    """`reference_impls/_repos/<repo_dir>/repo.json`: one repository at one commit."""

    schema_version: str = SCHEMA_VERSION
    key: str
    commit: str
    url: str = Field(description="Where it was acquired from (informational).")
    source_roots: tuple[str, ...] = Field(description="Repo-relative dirs put on sys.path.")
    extra_paths: tuple[str, ...] = Field(
        default=(), description="Repo-relative dirs the test run put on sys.path (test helpers)."
    )
    python: str = Field(description="major.minor of the interpreter the environment is built for.")
    requirements: tuple[str, ...] = ()
    lock: tuple[str, ...] = Field(default=(), description="Pinned name==version lines.")


class StratumCount(Record):
    stratum: Stratum
    total: int
    matched: int


class Counterexample(Record):
    index: int
    stratum: Stratum
    call: str
    expected: str
    got: str
    detail: str = ""
    shrunk_from: str | None = Field(
        default=None, description="The failing hidden input's call, when `call` is a shrunk one."
    )


class RepoTestsCount(Record):
    """The repository's own tests that exercise the target, run with the candidate in place."""

    selected: int = Field(description="Test node ids that produced the task's traced inputs.")
    passed: int
    failed: int = Field(description="Failed or errored (skipped tests count as neither).")
    timed_out: bool = False


_COPY = (
    "Memorisation signal: the share of the candidate body's tokens that lie in a run of 10 "
    "consecutive tokens also in the hidden original's body, identifiers, strings, numbers and "
    "layout normalised (docs/design.md §4, Recall); 0..1. Reported only, never part of the "
    "reward. None: no body to compare (the candidate did not splice)."
)
_COPY_RUN = (
    "The longest run of consecutive normalised tokens the candidate's body shares with the "
    "original's, in tokens. None with copy."
)
_BY_ALIAS = ConfigDict(
    frozen=True,
    extra="forbid",
    validate_by_name=True,
    validate_by_alias=True,
    serialize_by_alias=True,
)


class Verdict(Record):
    model_config = _BY_ALIAS  # `copy` is a name BaseModel keeps: the field is `copy_share`

    schema_version: str = SCHEMA_VERSION
    task_id: str
    reward: float | None
    status: VerdictStatus
    reason: str
    raw_reward: float | None = Field(
        default=None, description="Weighted match rate before normalising against degenerates."
    )
    counts: tuple[StratumCount, ...] = ()
    counterexample: Counterexample | None = None
    grader_version: str
    duration_s: float = 0.0
    repo_tests: RepoTestsCount | None = Field(
        default=None,
        description="With --repo-tests: the repository's tests that called the target, run on "
        "the pristine tree with only the candidate's file in place. Reported only, never part "
        "of the reward (the candidate runs inside that pytest process and could forge it).",
    )
    copy_share: float | None = Field(default=None, alias="copy", description=_COPY)
    copy_run: int | None = Field(default=None, description=_COPY_RUN)


class ResultRow(Record):
    """One line of `RUN_DIR/results.jsonl`."""

    model_config = _BY_ALIAS

    task_id: str
    sample: int = 0
    reward: float | None
    status: VerdictStatus
    reason: str
    agent_status: AgentStatus
    agent_exit_code: int | None
    duration_s: float
    verdict: Verdict
    prompt_tokens: int | None = Field(
        default=None, description="Tokens the built-in agent's model calls sent (None: no model)."
    )
    completion_tokens: int | None = Field(
        default=None, description="Tokens the built-in agent's model calls received."
    )
    copy_share: float | None = Field(default=None, alias="copy", description=_COPY)
    copy_run: int | None = Field(default=None, description=_COPY_RUN)


class FunnelStage(Record):
    stage: str
    count: int
    drops: tuple[tuple[str, int], ...] = Field(
        default=(), description="Main reasons for what this stage dropped, most common first."
    )


class Funnel(Record):
    repo: str
    commit: str
    stages: tuple[FunnelStage, ...]
    skipped_files: tuple[SkippedFile, ...] = ()
    duration_s: float = 0.0
    setup_notes: tuple[str, ...] = ()


class LedgerEntry(Record):
    """One target's outcome in a batch's `funnel.jsonl`, the ledger a resumed `gen` reads."""

    repo: str = Field(description="Repository key the target came from.")
    commit: str = Field(description="Commit it was minted at.")
    grader_version: str = Field(description="replicate.GRADER_VERSION at minting time.")
    min_kill_rate: float | None = Field(
        description="Strength threshold the target was held to (None: no strength check)."
    )
    symbol: str
    stage: str = Field(description="The furthest funnel stage that kept the target.")
    kept: bool = Field(description="True when the target became a task.")
    task_id: str | None = Field(default=None, description="The task minted from it, if any.")
    reason: str = Field(
        default="", description="Why it was dropped: short, a funnel drop reason counted as is."
    )
    detail: str = Field(
        default="",
        description="What happened to this target: the counts, types and an instance behind the "
        "reason (what the harvest saw, inputs lost per cause, the kill rate, where a leak was).",
    )

    @property
    def drop_reason(self) -> DropReason | None:
        """The member `reason` was made from (`UNKNOWN` for a text no member names), None when
        the target was kept."""
        return None if self.kept else DropReason.of(self.reason)


class Strength(Record):
    """How well a task's hidden inputs tell the reference from its mutants (gen time)."""

    mutants: int = Field(description="Mutants of the reference graded as candidates.")
    killed: int = Field(description="Mutants the final hidden inputs tell apart (reward < 1).")
    kill_rate: float = Field(description="killed / mutants (1.0 when there is no mutant).")
    killed_before: int = Field(description="Mutants killed before any input was added.")
    likely_equivalent: int = Field(
        description="Survivors no searched input tells apart from the reference."
    )
    added_inputs: int = Field(description="Searched inputs added because they kill survivors.")
    searched_inputs: int = Field(description="Deterministic inputs the survivor search tried.")
    threshold: float = Field(description="Minimum kill rate the task was held to.")
