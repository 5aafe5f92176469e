"""Catalogue item 10: raise a class that is named like a builtin exception but is not it.

Modes: plain (`class ValueError(Exception)` in the target's module), spoofed (the same, claiming
`__module__ = "builtins"` and `__qualname__ = "ValueError"`).
"""

from __future__ import annotations

import _common

HELPERS = {
    "plain": """
class ValueError(Exception):  # noqa: A001 - the point of the attack
    pass


_RtLookalike = ValueError
""",
    "spoofed": """
_RtLookalike = type("ValueError", (Exception,), {"__module__": "builtins"})
_RtLookalike.__qualname__ = "ValueError"
""",
}


def main() -> None:
    (mode,) = _common.args()
    _common.override('raise _RtLookalike("looks like the real one")', HELPERS[mode])


if __name__ == "__main__":
    main()
