"""Test ids that every process spells alike: pytest-xdist's workers must collect the same ids,
and a set's repr follows the process's string hashing (PYTHONHASHSEED differs per process)."""

from __future__ import annotations


def stable_id(value: object) -> str:
    """`repr(value)`, a set's or frozenset's members in sorted order."""
    if isinstance(value, set | frozenset):
        members = "{" + ", ".join(sorted(repr(member) for member in value)) + "}"
        return members if isinstance(value, set) else f"frozenset({members})"
    return repr(value)
