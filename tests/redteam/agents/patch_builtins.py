"""Catalogue item 5: patch `builtins` so that any "all passed?" check says yes."""

from __future__ import annotations

import _common

HEAD = """
import builtins as _rt_builtins

_rt_builtins.all = lambda *args, **kwargs: True
_rt_builtins.any = lambda *args, **kwargs: True
"""


def main() -> None:
    _common.override("return None", head=HEAD)


if __name__ == "__main__":
    main()
