"""The degenerate classes a class task is graded against at gen, each family on its own.

A degenerate class replaces every member's body with one statement an agent could write without
reading the task, the same family for every member (`class_programs`):

- ``return None`` in every member (`EVERY_NONE`);
- ``raise ValueError`` in every member (`EVERY_RAISE`);
- ``return self`` in every member (`EVERY_SELF`: a classmethod returns its ``cls``, a
  staticmethod None), what fluent methods, ``__enter__`` and ``__iter__`` do;
- ``return <its first argument>`` in every member (`EVERY_FIRST`: the first parameter after
  ``self``, None where there is none), a setter's or a container's ``add``'s answer;

and, for each, a lookup table of the visible calls (`replicate.gen.baseline.summarise`: the
traced calls made straight from the tests, which the workspace shows) that behaves like that
class on every other input.  Each family runs in the jail as a candidate does
(`replicate.grading.run_spliced`: every hidden input of the task, a run a member, and the task's
call sequences replayed on it) and is scored as a candidate is (`replicate.grading.graded_score`:
by member, and half on its sequences when the task has them), so the families are graded on
whatever a class task's hidden inputs and sequences are.  A table answers the visible member
calls only: a call sequence is none of them (its steps run on an instance the sequence built),
so on the sequences a table earns its family's replay, the same score.  Every family and table
is held to the floor `MAX_BASELINE`; the best of them (and of the methods' own degenerate
programs, `gen.classes`) is the class task's baseline.  A module task's file whose every body
returns None, and the table in front of it, are graded the same way (`graded_files`,
`gen/modules.py`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from replicate.batch import LoadedTask, StoredOutcome
from replicate.core import Baseline, Target
from replicate.gen.baseline import summarise
from replicate.gen.lines import keep_line_count
from replicate.grading import (
    Refusal,
    SequenceScore,
    original_source,
    run_spliced,
    score_sequences,
    tabled,
)
from replicate.inputs import parse_signature
from replicate.jail import Jail, Replay

EVERY_NONE = "class: every method returns None"
EVERY_RAISE = "class: every method raises ValueError"
EVERY_SELF = "class: every method returns self"
EVERY_FIRST = "class: every method returns its first argument"
# a table of the visible tests' call sequences in front of another program (`grading.tabled`)
SEQUENCE_TABLE = "visible call sequences, else"
_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]", re.MULTILINE)


@dataclass(frozen=True)
class ClassProgram:
    """A degenerate class: its name, and the statement that replaces each member's body (in
    the order of the class's members)."""

    name: str
    bodies: tuple[str, ...]


def class_programs(target: Target) -> list[ClassProgram]:
    """The degenerate classes of a class target, one per family."""
    members = target.members
    return [
        ClassProgram(EVERY_NONE, tuple("return None" for _ in members)),
        ClassProgram(EVERY_RAISE, tuple("raise ValueError" for _ in members)),
        ClassProgram(EVERY_SELF, tuple(f"return {_receiver(m) or 'None'}" for m in members)),
        ClassProgram(EVERY_FIRST, tuple(f"return {_first(m) or 'None'}" for m in members)),
    ]


def _receiver(member: Target) -> str | None:
    """A method's `self` (a classmethod's `cls`), None for a staticmethod."""
    if member.kind not in ("method", "classmethod"):
        return None
    signature = parse_signature(_undecorated(member, "method"))  # a classmethod's cls kept
    return signature.positional[0].name if signature and signature.positional else None


def _first(member: Target) -> str | None:
    signature = parse_signature(_undecorated(member, member.kind))
    return signature.first_argument(member.kind) if signature else None


def _undecorated(member: Target, kind: str) -> Target:
    """`member` with its signature from its `def` on (a decorated member's signature starts at
    its decorators, unindented where the `def` is indented) and the kind it is parsed as."""
    found = _DEF.search(member.signature)
    text = member.signature[found.start() :] if found else member.signature
    return member.model_copy(update={"kind": kind, "signature": text})


def with_bodies(task: LoadedTask, bodies: tuple[str, ...]) -> bytes:
    """The target file with each member's body replaced by its statement, the file's line
    count kept where it shrank (as a degenerate program of one function keeps it)."""
    original = original_source(task)
    pieces, start = [], 0
    for member, body in zip(task.hidden.target.members, bodies, strict=True):
        span = member.body_span
        pieces += [original[start : span.start_byte], body.encode("utf-8")]
        start = span.end_byte
    end = sum(len(piece) for piece in pieces)  # where the last member's statement ends
    source = b"".join(pieces) + original[start:]
    end_line = source.find(b"\n", end)
    return keep_line_count(source, end_line if end_line >= 0 else len(source), original)


class FamilyRunFailed(Exception):
    """A degenerate class could not be run (the infrastructure's trouble, said)."""


def class_baseline(task: LoadedTask, jail: Jail) -> Baseline:
    """Each degenerate class's raw reward and that of a table of the visible calls in front of
    it, best first (`graded_files`)."""
    programs = class_programs(task.hidden.target)
    return graded_files(task, jail, {p.name: with_bodies(task, p.bodies) for p in programs})


def graded_files(task: LoadedTask, jail: Jail, files: Mapping[str, bytes]) -> Baseline:
    """The raw reward of each of `files` (degenerate target files, by name) and of a table of
    the visible calls in front of it, best first, graded as a candidate is: its outcomes on
    the members' inputs and its replays of the task's call sequences (`FamilyRunFailed` when
    one could not run)."""
    outcomes: dict[str, Mapping[int, StoredOutcome]] = {}
    sequences: dict[str, SequenceScore] = {}
    replays: tuple[Replay, ...]
    for name, source in files.items():
        found = run_spliced(task, source, jail)
        if isinstance(found, Refusal) and found.status == "infra_error":
            raise FamilyRunFailed(f"{name}: {found.reason}")
        if isinstance(found, Refusal):  # its file did not import: nothing matches
            outcomes[name], replays = {}, ()
        else:
            outcomes[name], replays = found.run.parsed.outcomes, found.replays
        replayed = score_sequences(task, replays)
        if replayed is None:
            continue
        sequences[name] = replayed
        table = score_sequences(task, tabled(task, replays))
        if table is not None and table.reward > replayed.reward:  # it answered some step
            outcomes[f"{SEQUENCE_TABLE} {name}"] = outcomes[name]
            sequences[f"{SEQUENCE_TABLE} {name}"] = table
    return summarise(task, outcomes, sequences)
