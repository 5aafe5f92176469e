"""Gen's own programs keep the original's line count (`replicate.gen.lines`), and a mutant is
put in place without parsing the file (`replace_definition`), byte for byte as the candidates'
splice into the stubbed file puts it."""

from __future__ import annotations

from pathlib import Path

from replicate.batch import Batch
from replicate.gen.lines import keep_line_count
from replicate.gen.strength import spliced_into_stub, task_mutants
from replicate.languages.python_splice import replace_definition

BUNDLED = Path(__file__).resolve().parents[3]  # specs/ and reference_impls/ at the root


def test_blank_lines_make_up_a_shorter_program() -> None:
    original = b"def f():\n    x = 1\n    return x\n\nY = 2\n"
    program = b"def f():\n    return None\n\nY = 2\n"
    at = program.index(b"\n\nY")
    padded = keep_line_count(program, at, original)
    assert padded == b"def f():\n    return None\n\n\nY = 2\n"
    assert padded.count(b"\n") == original.count(b"\n")
    assert keep_line_count(program, at - 1, original) == program  # not a line's end
    assert keep_line_count(original + b"\n", 0, original) == original + b"\n"  # not shorter


def test_a_mutant_put_in_place_is_the_splice_into_the_stub_byte_for_byte() -> None:
    batch = Batch.open(BUNDLED)
    compared = 0
    for ident in batch.ids:
        task = batch.load(ident)
        original, target = task.original_source(), task.hidden.target
        for mutant in task_mutants(task):
            direct = replace_definition(original, mutant.text, target)
            assert direct is not None and direct == spliced_into_stub(task, mutant), ident
            compared += 1
    assert compared > 500


def test_what_replace_definition_cannot_tell_is_left_to_the_splice() -> None:
    batch = Batch.open(BUNDLED)
    # a function task: a class task's members are mutated through their methods' tasks
    task = batch.load(next(i for i in batch.ids if "__class." not in i))
    original, target = task.original_source(), task.hidden.target
    mutant = task_mutants(task)[0]
    assert replace_definition(original, mutant.text, target) is not None  # the control
    crlf = original.replace(b"\n", b"\r\n")
    assert replace_definition(crlf, mutant.text, target) is None
    assert replace_definition(original, "x = 1\n", target) is None  # not a def
    other = mutant.text.replace(f"def {target.name}(", "def something_else(", 1)
    assert replace_definition(original, other, target) is None
