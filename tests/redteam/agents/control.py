"""The control agent: a hand-written correct implementation. Shows the grader is still up and
still grading after the attacks around it (reward 1.0)."""

from __future__ import annotations

import _common
import correct


def main() -> None:
    _common.override(correct.body(_common.target_name()))


if __name__ == "__main__":
    main()
