"""Call sequences: the ordered calls the repository's tests made on one live instance of a class,
and how a replay of one compares with another, step by step (no I/O).

A `CallSequence` is recorded by the harvest (`replicate.harvest`, the shipped
`sequences` recorder) and replayed by the runner in the jail on a class, the reference's or a
candidate's (`replicate.jail.sequences`); `replicate.grading.sequences` compares two replays
into a `SequenceComparison`.  Arguments are in the batch's stored value form: the base64 of a
pickled ``(args, kwargs)``, ``self`` left out, as a `CallInput`'s ``pickle_b64``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, model_validator

from replicate.core.records import Record

MAX_SEQUENCE_STEPS = 1_000  # no sequence is longer, whatever the recorder was told
CONSTRUCT = "__init__"  # a step of this name is the class call that built the instance


class StepKind(StrEnum):
    """What a step does to the instance: builds it, calls a method, or applies an operator (a
    dunder method the class defines, called as `len(x)`, `x[k]`, `x == y` call it)."""

    CONSTRUCT = "construct"
    METHOD = "method"
    OPERATOR = "operator"


class Ending(StrEnum):
    """Why a recorded sequence ends where it does."""

    TEST_ENDED = "test ended"  # the test item that made it finished
    STEP_LIMIT = "step limit"  # it reached the recorder's steps per sequence
    UNPICKLABLE = "unpicklable"  # the next step's arguments or result did not pickle
    CONSTRUCTION_RAISED = "construction raised"  # the class call raised: no instance
    WIDENED = "widened"  # generated from recorded ones (`replicate.inputs.stateful`), not recorded


class StepOutcome(StrEnum):
    """How a recorded step ended."""

    RETURNED = "returned"
    RAISED = "raised"
    SELF = "self"  # it returned the instance itself (`__iadd__`, a fluent method)
    UNRECORDED = "unrecorded"  # a widened sequence's step: only a replay of the reference says


class Step(Record):
    """One call on the instance, as the tests made it."""

    name: str = Field(description="The method's name; `__init__` for the class call.")
    args_b64: str = Field(
        description="Pickled (args, kwargs) before the call, self left out; in a widened "
        "sequence, a recipe: a recorded step's pickle with plain arguments replaced."
    )
    outcome: StepOutcome
    result_b64: str = Field(
        default="",
        description="Pickled value returned (RETURNED) or exception raised (RAISED); '' for SELF.",
    )
    refs: tuple[tuple[int | str, int], ...] = Field(
        default=(),
        description="Arguments that are an earlier step's very result, fed back on replay: "
        "(position or keyword, step index); index 0 is the instance.",
    )

    @property
    def kind(self) -> StepKind:
        if self.name == CONSTRUCT:
            return StepKind.CONSTRUCT
        if self.name.startswith("__") and self.name.endswith("__"):
            return StepKind.OPERATOR
        return StepKind.METHOD


class ClassRef(Record):
    """The class whose instances' sequences are recorded and replayed."""

    path: str = Field(description="Repo-relative POSIX path of the file that defines it.")
    module: str
    qualname: str

    @property
    def key(self) -> str:
        return f"{self.module}.{self.qualname}"


class CallSequence(Record):
    """The calls made on one instance of `cls`, in order, the class call first."""

    cls: ClassRef
    origin: str = Field(default="", description="The test item that made it.")
    visible: bool = Field(default=True, description="Built from test code an agent can read.")
    ending: Ending = Ending.TEST_ENDED
    steps: tuple[Step, ...] = Field(min_length=1, max_length=MAX_SEQUENCE_STEPS)

    @model_validator(mode="after")
    def _construction_first(self) -> CallSequence:
        kinds = [step.kind for step in self.steps]
        if kinds[0] is not StepKind.CONSTRUCT or StepKind.CONSTRUCT in kinds[1:]:
            raise ValueError("a call sequence starts with its class call, and has only that one")
        for n, step in enumerate(self.steps):
            if any(not 0 <= m < n for _, m in step.refs):
                raise ValueError(f"step {n} is fed a result of a step not before it")
        return self

    def prefix(self, length: int) -> CallSequence:
        """The sequence's first `length` steps (at least the class call; a step's refs point
        only backwards, so a prefix keeps them whole)."""
        return self.model_copy(update={"steps": self.steps[: max(1, length)]})


class SequenceComparison(Record):
    """A replay against the expected one, step by step: `matched` steps agree from the first
    (the comparison stops at the first that does not), and the end state if both have one."""

    steps: int = Field(description="Steps in the expected replay.")
    matched: int = Field(description="Steps that agree before the first that does not.")
    first_failing: int | None = Field(
        default=None, description="Index of the first step that does not agree; None: none."
    )
    state_compared: bool = Field(
        default=False, description="Whether the instance's end state was gradable and compared."
    )
    state_matches: bool = True
    detail: str = Field(default="", description="What differed at the first failing step.")

    @property
    def passed(self) -> bool:
        return self.first_failing is None and self.state_matches

    @property
    def reward(self) -> float:
        """The dense reward: the share of steps matched, the end state one more step when
        compared."""
        total = self.steps + self.state_compared
        got = self.matched + (self.state_compared and self.state_matches and self.passed)
        return got / total if total else 1.0

    @property
    def failing_prefix(self) -> int | None:
        """The length of the shortest prefix that fails: up to and including the first failing
        step (the whole sequence when only the end state differs); None when it passes."""
        if self.first_failing is not None:
            return self.first_failing + 1
        return None if self.state_matches else self.steps


class SequenceStratum(StrEnum):
    """Where a class task's hidden sequence came from: recorded while the tests ran, or widened
    from those by stateful property testing (`replicate.inputs.stateful`)."""

    RECORDED = "recorded"
    WIDENED = "widened"


class HiddenSequence(Record):
    """A call sequence stored with a class task as a hidden input (`sequences.jsonl` beside
    `inputs.jsonl`), with the reference's replay of it: each step's outcome in the form
    `grading.compare` compares, and the instance's tagged end state (None: not gradable)."""

    index: int
    stratum: SequenceStratum
    sequence: CallSequence
    steps: tuple[dict[str, Any], ...] = Field(description="The reference's outcome per step.")
    state: Any = Field(default=None, description="The reference's instance at the end, tagged.")

    @model_validator(mode="after")
    def _one_outcome_a_step(self) -> HiddenSequence:
        if len(self.steps) != len(self.sequence.steps):
            raise ValueError("a hidden sequence has one expected outcome per step")
        return self
