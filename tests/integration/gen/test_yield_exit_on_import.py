"""A module that calls `sys.exit` as it is imported fails its own collection; the tests run.

Shaped like simplejson 4.3.0 in the yield sample (`bench/yield_sample.py`): a stress script at
the root (`tsan_stress_simplejson.py`) exits when the C extension is missing, and the harvest
hands root modules to pytest for their doctests. pytest lets a SystemExit in collection end the
whole session (INTERNALERROR, exit code 3) before any test ran: every target was "not called by
the tests". The control ships the harvest without its hook around collection reports.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.gen.drop_classes import before_and_after

FILES = {
    "pyproject.toml": '[project]\nname = "stress"\nversion = "0.1.0"\n',
    "stress_check.py": (
        "import sys\n\ntry:\n    import _no_such_speedups\nexcept ImportError:\n"
        '    print("SKIP: no speedups", file=sys.stderr)\n    sys.exit(0)\n'
    ),
    "packing/__init__.py": "",
    "packing/core.py": (
        "def pack(items, width):\n"
        '    """Items in rows of `width`, the last row short."""\n'
        "    return [list(items[n : n + width]) for n in range(0, len(items), width)]\n"
    ),
    "tests/test_core.py": (
        "from packing.core import pack\n\n\ndef test_pack():\n"
        "    assert pack([1, 2, 3], 2) == [[1, 2], [3]]\n"
        "    assert pack([], 3) == []\n"
        '    assert pack("abcd", 2) == [["a", "b"], ["c", "d"]]\n'
    ),
}
PACK = "packing.core.pack"
UNHOOKED = ("pytest_make_collect_report = exit_on_import", "_unhooked = exit_on_import")


def test_a_module_exiting_on_import_does_not_end_the_harvest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without = {"replicate_harvest.py": UNHOOKED}  # the control: SystemExit ends the session
    before, after = before_and_after(tmp_path, FILES, without, monkeypatch, (PACK,))
    assert before.reasons((PACK,)) == {PACK: "not called by the tests"}
    assert after.kept((PACK,)) == [PACK]
