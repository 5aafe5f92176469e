"""Degenerate programs and the baseline they set for a task's reward (docs/design.md §4).

A degenerate program keeps the target's signature and replaces its body with one statement, of
the families `replicate.gen.families` lists: ``raise NotImplementedError`` (the stub), ``return
None``, ``raise <T>`` (``ValueError`` and every exception type the reference raises), the
identity on each parameter, each parameter's empty value, and constants (the values the
reference returns most often, and the empty value of the type it returns most often); and, for
each of those, a lookup table of the calls the agent can see (the traced inputs called straight
from the repository's tests or a doctest, which stay in the workspace; not those the library made
itself while a test ran) that behaves like that program on every other input.  The best raw
reward among them is the task's baseline b; rewards are normalised to max(0, (raw - b) / (1 - b)),
so memorising the visible tests earns ~0 (catalogue 16) and the reward measures behaviour beyond
them.  `too_weak` holds every program, tables included, under the floor of its kind; `overpaid`
checks that none earns more than `MAX_DEGENERATE_REWARD` once normalised; `same_as_original`
names a program that matches the reference on every input (the original is one: the task is
dropped with `DropReason.DEGENERATE_ORIGINAL`).

Most of them need no run of their own: where the stub raised NotImplementedError the body had
started and done nothing, so ``return None``, ``return <constant>`` and ``raise T`` would have
left the same arguments behind; their outcomes are the stub's with the status, value or
exception type changed.  That holds when no decorator sits between the body and the caller
(`staticmethod` and `classmethod` aside) and every input was loaded and called (a `self` built
from its class call may call the target while it is built); otherwise ``return None``, ``raise
ValueError`` and the constants a literal writes run in the jail like the identities and the
empty values always do.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from replicate.batch import LoadedTask, StoredOutcome
from replicate.core import (
    Baseline,
    CallInput,
    DegenerateScore,
    DropReason,
    Target,
)
from replicate.gen.families import (
    CONSTANT,
    EMPTY,
    IDENTITY,
    PARTIAL,
    Program,
    common_values,
    constant_name,
    constant_programs,
    programs,
)
from replicate.gen.lines import keep_line_count
from replicate.grading import (
    MAX_BASELINE,
    MAX_CONSTANT_BASELINE,
    MAX_DEGENERATE_REWARD,
    SequenceScore,
    compare_outcome,
    graded_score,
    matches,
    normalise,
    original_source,
)
from replicate.inputs import parse
from replicate.jail import Jail

Outcome = StoredOutcome  # stored, run or made up for a degenerate program
STUB_EXCEPTION = "builtins.NotImplementedError"
STUB_BODY = "raise NotImplementedError"
VISIBLE = "visible calls, else"  # a lookup table of the traced calls, then another program
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})
_CALLED = frozenset({"returned", "raised"})  # statuses of an input that was loaded and called


def programs_to_run(
    target: Target, derived: bool = True, common: Sequence[Outcome] = ()
) -> list[Program]:
    """The degenerate programs whose outcomes cannot be read off the stub's: the identities and
    the empty values; and ``return None``, ``raise ValueError`` and the constants of `common`
    (expected outcomes) when they could not be read off at all (see `derivable`)."""
    found = programs(target)
    if not derived or not undecorated(target):
        found += [Program(body, body) for body in ("return None", "raise ValueError")]
        found += constant_programs(common)
    return found


def undecorated(target: Target) -> bool:
    return set(target.decorators) <= _PLAIN_DECORATORS


def with_body(task: LoadedTask, body: str) -> bytes:
    """The target file with the target's body replaced by `body` (as the stub replaces it)."""
    span = task.hidden.target.body_span
    source = original_source(task)
    statement = body.encode("utf-8")
    program = source[: span.start_byte] + statement + source[span.end_byte :]
    line_end = program.find(b"\n", span.start_byte + len(statement))
    return keep_line_count(program, line_end if line_end >= 0 else len(program), source)


def derivable(target: Target, stub: Mapping[int, Outcome] | None) -> bool:
    """Whether the stub's outcomes show what the programs that only change its body's statement
    would do: its module imported, no decorator sits between body and caller, and every input
    was loaded and called.  A method's `self` built afresh from its class call runs the class's
    code, which may call the target (`Table.__init__` calls `_fill`): then the stub fails the
    load, and `return None` would have built a `self` and called the method."""
    if stub is None or not undecorated(target):
        return False
    return all(outcome.get("status") in _CALLED for outcome in stub.values())


def derived_outcomes(
    task: LoadedTask, stub: Mapping[int, Outcome], common: Sequence[Outcome] | None = None
) -> dict[str, dict[int, Outcome]]:
    """Outcomes of the programs that only change what the stub's body did, per program (none
    when they cannot be read off the stub's: see `derivable`); the constants are the most
    common values among `common` (the task's expected outcomes by default)."""
    if not derivable(task.hidden.target, stub):
        return {}
    programs: dict[str, Any] = {"return None": {"status": "returned", "value": {"t": "none"}}}
    values = task.expected.values() if common is None else common
    for value in common_values(values):
        programs.setdefault(constant_name(value), {"status": "returned", "value": value})
    raised = {_exc_type(o) for o in task.expected.values() if o.get("status") == "raised"}
    for name in sorted({"builtins.ValueError", *(t for t in raised if t)}):
        programs[f"raise {name.removeprefix('builtins.')}"] = {
            "status": "raised",
            "exc": {"type": name, "msg": ""},
        }
    return {
        name: {i: _replace(outcome, change) for i, outcome in stub.items()}
        for name, change in programs.items()
    }


def _exc_type(outcome: Outcome) -> str | None:
    exc = outcome.get("exc")
    kind = exc.get("type") if isinstance(exc, Mapping) else None
    return kind if isinstance(kind, str) else None


def _replace(outcome: Outcome, change: Mapping[str, Any]) -> Outcome:
    """The stub's outcome as the program would have left it (unchanged where the stub's body
    did not run as such)."""
    if outcome.get("status") != "raised" or _exc_type(outcome) != STUB_EXCEPTION:
        return outcome
    kept = {k: v for k, v in outcome.items() if k not in ("status", "exc", "value")}
    return {**kept, **change}


def _outcomes(task: LoadedTask, source: bytes, jail: Jail) -> Mapping[int, Outcome] | str | None:
    """A program's outcomes; None when its module does not import; a str on infra trouble."""
    target = task.hidden.target
    run = jail.run(target, task.inputs, task.hidden.grading, override=source)
    problem = run.infra_problem()
    if problem:
        return problem
    return None if run.parsed.import_error is not None else run.parsed.outcomes


def baseline(task: LoadedTask, jail: Jail) -> Baseline | str:
    """The task's baseline, or why it could not be computed (an infrastructure problem)."""
    outcomes = program_outcomes(task, jail)
    return outcomes if isinstance(outcomes, str) else summarise(task, outcomes)


def program_outcomes(
    task: LoadedTask,
    jail: Jail,
    common: Sequence[Outcome] | None = None,
    only: Collection[str] | None = None,
) -> dict[str, Mapping[int, Outcome]] | str:
    """Each degenerate program's outcomes on the task's inputs (tables aside; constants from
    `common`, see `derived_outcomes`), or why they could not be had (infrastructure).  `only`:
    the names of the programs that need a run of their own to run (all by default); those read
    off the stub's come at no cost."""
    stub = _outcomes(task, with_body(task, STUB_BODY), jail)
    if isinstance(stub, str):
        return stub
    outcomes: dict[str, Mapping[int, Outcome]] = {"raise NotImplementedError": stub or {}}
    outcomes.update(derived_outcomes(task, stub, common) if stub is not None else {})
    derived = derivable(task.hidden.target, stub)
    values = list(task.expected.values()) if common is None else common
    for program in programs_to_run(task.hidden.target, derived, values):
        if program.name in outcomes or (only is not None and program.name not in only):
            continue
        found = _outcomes(task, with_body(task, program.body), jail)
        if isinstance(found, str):
            return found
        outcomes[program.name] = found or {}
    return outcomes


def summarise(
    task: LoadedTask,
    outcomes: Mapping[str, Mapping[int, Outcome]],
    sequences: Mapping[str, SequenceScore] | None = None,
) -> Baseline:
    """Each program's raw reward and that of a lookup table of the visible calls in front of it
    (`visible_table`), best first, each graded as the task's candidates are (`graded_score`: a
    class task's by member, with the program's call sequences' score, `sequences`, by program;
    a task with sequences needs each program's).  The table's answers are the program's own on
    every input but the visible calls, so its matches are the program's there and, on those
    calls, what the expected outcome compared with itself gives: compared once per task, not
    once per program (scoring the degenerate programs was ~7% of a boltons gen's time holding
    the interpreter lock, the tables half of it).  A call sequence is no visible call: on the
    sequences a table earns its program's score."""
    inputs, expected, settings = task.inputs, task.expected, task.hidden.grading
    shown = {i.index for i in inputs if visible(i)}
    answered = {n: compare_outcome(expected[n], expected[n], settings) for n in shown}
    scores = []
    for name, got in outcomes.items():
        replayed = (sequences or {}).get(name)
        if task.sequences and replayed is None:
            raise ValueError(f"{task.id}: the call sequences of {name!r} were not scored")
        found = matches(inputs, expected, got, settings)
        table = [
            answered[i.index] if i.index in shown else m for i, m in zip(inputs, found, strict=True)
        ]
        for program, graded in ((name, found), (f"{VISIBLE} {name}", table)):
            reward = graded_score(task, graded, replayed)[1]
            scores.append(DegenerateScore(program=program, raw_reward=reward))
    best = ranked(scores)
    return Baseline(raw_reward=best[0].raw_reward if best else 0.0, programs=tuple(best))


def visible(item: CallInput) -> bool:
    """Whether the agent can see the call: a traced input called straight from the repository's
    tests or a doctest."""
    return item.provenance == "traced" and item.visible


def visible_table(task: LoadedTask, otherwise: Mapping[int, Outcome]) -> dict[int, Outcome]:
    """The outcomes of a lookup table of the calls the agent can see (the traced inputs called
    straight from the repository's tests or a doctest, with what they should give) that behaves
    like another degenerate program on every other input (docs/design.md §5, item 16)."""
    got = {i: outcome for i, outcome in otherwise.items()}
    for item in task.inputs:
        if visible(item):
            got[item.index] = task.expected[item.index]
    return got


def ranked(scores: Sequence[DegenerateScore]) -> list[DegenerateScore]:
    return sorted(scores, key=lambda s: (-s.raw_reward, s.program))


def behind(program: str) -> str:
    """The program a table of the visible calls falls back on (the program itself otherwise)."""
    return program.removeprefix(f"{VISIBLE} ")


def floor(program: str) -> float:
    """The raw reward at which a program makes a task too weak: a table of the visible calls
    is held to the floor of the program it falls back on."""
    return MAX_CONSTANT_BASELINE if behind(program).startswith(PARTIAL) else MAX_BASELINE


def too_weak(found: Baseline) -> str | None:
    """Why a degenerate program (a table of the visible calls included) makes the task too weak
    to mint, or None."""
    weak = reaching_floor(found)
    if not weak:
        return None
    program = weak[0].program
    return DropReason.DEGENERATE_AT_FLOOR.says(_kind(program), floor(program))


def reaching_floor(found: Baseline) -> list[DegenerateScore]:
    """The programs at or above the floor of their kind, best first."""
    return [p for p in found.programs if p.raw_reward >= floor(p.program)]


def _kind(program: str) -> str:
    other = behind(program)
    kinds = {CONSTANT: "a constant", IDENTITY: "a parameter", EMPTY: "an empty value"}
    kind = next((k for prefix, k in kinds.items() if other.startswith(prefix)), other.split()[0])
    return f"the visible calls, else {kind}" if other != program else kind


def overpaid(found: Baseline) -> str | None:
    """Why some degenerate program would earn more than `MAX_DEGENERATE_REWARD` once its raw
    reward is normalised against the task's baseline, or None (checked on every minted task)."""
    program = _overpaid(found)
    if program is None:
        return None
    return DropReason.DEGENERATE_OVERPAID.says(_kind(program.program), MAX_DEGENERATE_REWARD)


def _overpaid(found: Baseline) -> DegenerateScore | None:
    return next(
        (
            p
            for p in found.programs
            if normalise(p.raw_reward, found.raw_reward) > MAX_DEGENERATE_REWARD
        ),
        None,
    )


def weak_detail(found: Baseline) -> str:
    """The numbers behind `too_weak` or `overpaid`, naming the program: "a degenerate program
    (return None) scores 0.62, at or above the floor 0.5"; '' when neither holds."""
    weak = reaching_floor(found)
    if weak:
        program = weak[0].program
        return (
            f"a degenerate program ({program}) scores {weak[0].raw_reward:.2f}, at or above "
            f"the floor {floor(program)}"
        )
    paid = _overpaid(found)
    if paid is None:
        return ""
    earned = normalise(paid.raw_reward, found.raw_reward)
    return (
        f"a degenerate program ({paid.program}) earns {earned:.2f} normalised (raw "
        f"{paid.raw_reward:.2f} against the baseline {found.raw_reward:.2f})"
    )


def same_as_original(task: LoadedTask, found: Baseline, searched: bool) -> str | None:
    """Why the original is itself a degenerate program, or None: a program (not a table)
    matches it on every input, and either its body is one statement a degenerate program is
    (`trivial_body`) or `searched`: the search for inputs that tell them apart found none."""
    alike = [p.program for p in found.programs if p.raw_reward >= 1.0]
    program = next((name for name in alike if behind(name) == name), None)
    if program is None:
        return None
    body = trivial_body(task)
    everywhere = f"{program} matches it on all {len(task.inputs)} inputs"
    if body is not None:
        return f"its body is `{body}`; {everywhere}"
    return f"{everywhere}, searched ones included" if searched else None


def trivial_body(task: LoadedTask) -> str | None:
    """The original's body (after its docstring), when it is one statement that returns a
    parameter, a literal or nothing, passes, or raises NotImplementedError."""
    span = task.hidden.target.body_span
    return trivial_statement(original_source(task)[span.start_byte : span.end_byte])


def trivial_statement(body: bytes) -> str | None:
    """`body` (a function's statements) as one line when it is one trivial statement
    (`trivial_body`), else None."""
    text = body.decode("utf-8", "replace")
    try:
        tree = parse(textwrap.dedent(text).strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    if len(tree.body) != 1:
        return None
    (statement,) = tree.body
    return ast.unparse(statement) if _trivial(statement) else None


def _trivial(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)
    if isinstance(statement, ast.Raise):
        raised = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError"
    if not isinstance(statement, ast.Return):
        return False
    if statement.value is None or isinstance(statement.value, ast.Name):
        return True  # a name that is not a parameter is a global: a constant as well
    try:
        ast.literal_eval(statement.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True
