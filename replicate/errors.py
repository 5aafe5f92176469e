"""The one exception type the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations


class ReplicateError(Exception):
    """Bad input to the tool, or a condition the user can act on: printed as one line."""

    exit_code: int = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class InfraError(ReplicateError):
    """Our own machinery failed (sandbox, environment): not the candidate's fault."""

    exit_code = 3
