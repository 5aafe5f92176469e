"""The trusted side of recording call sequences: what the plugin is told (`SequenceBudget`, the
classes) and its ``sequence`` records read back as `CallSequence`s (the shipped recorder is
`sequences.py`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from replicate.core import MAX_SEQUENCE_STEPS, CallSequence, ClassRef, Ending, Step


@dataclass(frozen=True)
class SequenceBudget:
    """At most `max_steps` steps per sequence and `max_sequences` sequences per class, of which
    one test item starts at most a quarter."""

    max_steps: int = 100
    max_sequences: int = 40


def sequence_config(classes: Mapping[str, ClassRef], budget: SequenceBudget) -> dict[str, Any]:
    """The plugin's configuration for recording `classes`' sequences (keys: their `key`s)."""
    return {
        "classes": [
            {"key": k, "module": c.module, "qualname": c.qualname} for k, c in classes.items()
        ],
        "max_steps": min(budget.max_steps, MAX_SEQUENCE_STEPS),
        "max_sequences": budget.max_sequences,
    }


def read_sequences(
    records: Iterable[Mapping[str, Any]], classes: Mapping[str, ClassRef]
) -> dict[str, tuple[CallSequence, ...]]:
    """The ``sequence`` records of the chosen classes as sequences, per class key, in the order
    they were written, a sequence equal to one before it (its steps) left out; malformed
    records are skipped (the channel is the repository's tests' too)."""
    found: dict[str, list[CallSequence]] = {}
    seen: set[bytes] = set()
    for rec in records:
        cls = classes.get(str(rec.get("key")))
        if rec.get("rec") != "sequence" or cls is None:
            continue
        try:
            sequence = CallSequence(
                cls=cls,
                origin=str(rec.get("origin", "")),
                visible=rec.get("visible") is not False,
                ending=Ending(str(rec.get("ending"))),
                steps=tuple(Step(**step) for step in rec["steps"]),
            )
        except (KeyError, TypeError, ValueError, ValidationError):
            continue
        ident = hashlib.sha256(repr([cls.key, *sequence.steps]).encode()).digest()
        if ident not in seen:
            seen.add(ident)
            found.setdefault(cls.key, []).append(sequence)
    return {k: tuple(v) for k, v in found.items()}
