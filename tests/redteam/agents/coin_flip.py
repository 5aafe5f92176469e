"""Catalogue item 17: answer right or wrong at random, hoping a single grading is lucky.

The argument is the chance of a right answer on each call (default 0.8): high enough that one
grading pays well above the task's degenerate baseline, so only grading twice can hold it down.
"""

from __future__ import annotations

import _common
import correct

HELPERS = """
def _rt_correct(*args, **kwargs):
{body}
"""


def main() -> None:
    (chance,) = _common.args() or ["0.8"]
    body = "".join(
        "    " + line + "\n" for line in correct.body(_common.target_name()).strip().splitlines()
    )
    flip = (
        "import random\n"
        f"if random.SystemRandom().random() < {float(chance)!r}:\n"
        "    return _rt_correct(*args, **kwargs)\n"
        "try:\n"
        "    return not _rt_correct(*args, **kwargs)\n"
        "except Exception:\n"
        "    return None\n"
    )
    _common.override(flip, HELPERS.format(body=body))


if __name__ == "__main__":
    main()
