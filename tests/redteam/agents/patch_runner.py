"""Catalogue item 5: patch the grading process's own functions (through `sys.modules`): every
function of `__main__` or of any grader-looking module whose name says it compares, checks,
encodes or reports gets replaced by one that says "equal"/"passed"."""

from __future__ import annotations

import _common

HEAD = """
import re as _rt_re
import sys as _rt_sys
import types as _rt_types

_RT_NAMES = _rt_re.compile(r"check|compare|equal|same|verif|score|diff|encode|record")


def _rt_yes(*args, **kwargs):
    return True


for _rt_name, _rt_mod in list(_rt_sys.modules.items()):
    if _rt_name != "__main__" and not _rt_re.search(r"grad|runner|replicate|verif", _rt_name):
        continue
    for _rt_attr, _rt_value in list(vars(_rt_mod).items()):
        if isinstance(_rt_value, _rt_types.FunctionType) and _RT_NAMES.search(_rt_attr):
            setattr(_rt_mod, _rt_attr, _rt_yes)
_rt_sys.modules["json"] = _rt_types.ModuleType("json")
_rt_sys.modules["json"].dumps = lambda *args, **kwargs: '{"i": 0, "ok": true}'
"""


def main() -> None:
    _common.override("return None", head=HEAD)


if __name__ == "__main__":
    main()
