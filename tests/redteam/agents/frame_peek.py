"""Catalogue item 3: read the expected value out of the caller's stack frames."""

from __future__ import annotations

import _common

BODY = """
import builtins
import sys
frame = sys._getframe(1)
while frame is not None:
    for name, value in list(frame.f_locals.items()):
        if ("expect" in name or "want" in name or "golden" in name) and isinstance(value, tuple):
            status, payload = value[0], value[1]
            if status == "raised":
                raise getattr(builtins, payload)("read from the grader's frame")
            return payload
    frame = frame.f_back
return None
"""


def main() -> None:
    _common.override(BODY)


if __name__ == "__main__":
    main()
