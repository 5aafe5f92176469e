"""Catalogue item 1: results whose `__eq__` is always true, plain or subclassing a builtin.

Modes: object | int | str | list | dict | iter (an always-equal object where a generator is due).
"""

from __future__ import annotations

import _common

SUBCLASS = """
class _RtCheat({base}):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = {base}.__hash__ if {base}.__hash__ is not None else object.__hash__
"""
VALUES = {"int": "_RtCheat(0)", "str": '_RtCheat("")', "list": "_RtCheat()", "dict": "_RtCheat()"}


def main() -> None:
    (mode,) = _common.args()
    if mode in ("object", "iter"):
        _common.override("return _RtAlwaysEqual()", _common.ALWAYS_EQUAL)
    else:
        _common.override(f"return {VALUES[mode]}", SUBCLASS.format(base=mode))


if __name__ == "__main__":
    main()
