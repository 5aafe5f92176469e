"""Catalogue item 2: leave with exit status 0 before any result can be checked.

Modes: import-sys | import-os (at import of the target module), call-sys | call-os (at call).
"""

from __future__ import annotations

import _common

EXITS = {"sys": "import sys\nsys.exit(0)", "os": "import os\nos._exit(0)"}


def main() -> None:
    (mode,) = _common.args()
    when, how = mode.split("-")
    if when == "import":
        _common.override("return None", head=EXITS[how] + "\n")
    else:
        _common.override(EXITS[how])


if __name__ == "__main__":
    main()
