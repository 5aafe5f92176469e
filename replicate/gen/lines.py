"""Gen's own programs keep the original file's line count.

A mutant or a degenerate program changes only the target's definition, but usually in fewer
lines than the original has (a body of one statement, a definition re-printed without comments).
Blank lines put right after the changed definition make up the difference, so every statement
after it keeps its line and a session's runner can compile only the changed statement into the
original's code (`replicate/jail/runner/importing.py`, "a session's programs, compiled once").
Blank lines change nothing a program does.
"""

from __future__ import annotations


def keep_line_count(program: bytes, at: int, original: bytes) -> bytes:
    """`program` with blank lines inserted at byte `at` (the end of the changed definition's
    last line) until it has as many lines as `original`; unchanged when it has as many or more,
    or when `at` is not the end of a line."""
    missing = original.count(b"\n") - program.count(b"\n")
    if missing <= 0 or not 0 <= at <= len(program) or program[at : at + 1] not in (b"\n", b""):
        return program
    return program[:at] + b"\n" * missing + program[at:]
