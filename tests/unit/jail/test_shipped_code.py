"""A candidate's file compiled on the host and shipped to a session's child
(`replicate.jail.bytecode.shipped_code`, `importing._shipped_code`): the child takes the code only
for the very source its file holds, from the same interpreter, and compiles it otherwise."""

from __future__ import annotations

from pathlib import Path

from replicate.jail.bytecode import compile_candidate, shipped_code
from replicate.jail.runner import importing

SOURCE = b"def f(x):\n    return x + 1\n"
PATH = "/repo/src/pkg/target.py"


def test_the_child_takes_the_host_s_code_for_the_same_source(tmp_path: Path) -> None:
    shipped = tmp_path / "current.code"
    shipped.write_bytes(shipped_code(SOURCE, PATH))
    code = importing._shipped_code(SOURCE, str(shipped))
    assert code == compile(SOURCE, PATH, "exec", dont_inherit=True)
    assert code.co_filename == PATH


def test_other_source_another_interpreter_or_no_file_compile_in_the_child(
    tmp_path: Path,
) -> None:
    shipped = tmp_path / "current.code"
    blob = shipped_code(SOURCE, PATH)
    shipped.write_bytes(blob)
    assert importing._shipped_code(SOURCE.replace(b"1", b"2"), str(shipped)) is None
    shipped.write_bytes(b"\0\0\0\0" + blob[4:])  # another magic number
    assert importing._shipped_code(SOURCE, str(shipped)) is None
    shipped.write_bytes(blob[:-3])  # cut short
    assert importing._shipped_code(SOURCE, str(shipped)) is None
    assert importing._shipped_code(SOURCE, str(tmp_path / "none")) is None


def test_nothing_is_shipped_for_a_file_that_warns_or_fails_to_compile() -> None:
    warns = b'def f():\n    return "\\d"\n'  # an invalid escape: a SyntaxWarning
    assert compile_candidate(warns, PATH).warned
    assert shipped_code(warns, PATH) == b""  # the child compiles it, and warns, itself
    broken = b"def f(:\n"
    assert compile_candidate(broken, PATH).problem == "line 1: invalid syntax"
    assert shipped_code(broken, PATH) == b""
