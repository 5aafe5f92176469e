"""The reward functions keep one warm grader per batch for the process (`grader_for`); each test
module here stops its jails when it ends, so no later test sees them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from replicate.integrations.grading import close_graders


@pytest.fixture(autouse=True, scope="module")
def _close_graders() -> Iterator[None]:
    yield
    close_graders()
