"""A session's programs compiled once (`importing._Held`, `importing._patched`) and gen's programs
that keep the original's line count (`replicate.gen.lines`): the code a child takes from the
held program is the file's own compile, but for the two differences the runner names."""

from __future__ import annotations

import types
from pathlib import Path

from replicate.batch import Batch
from replicate.gen.baseline import with_body
from replicate.gen.strength import spliced_mutant, task_mutants
from replicate.jail.runner import importing

BUNDLED = Path(__file__).resolve().parents[3]  # specs/ and reference_impls/ at the root
PATH = "/repo/pkg/module.py"

BASE = b'''"""A module."""

LIMIT = 3


def first(items, default=None):
    # the first item
    for item in items:
        return item
    return default


class Box:
    def size(self):
        return LIMIT

    def name(self):
        return "box"
'''


def held_for(source: bytes, path: str = PATH) -> importing._Held:
    held = importing._Held()
    held.offer(path, source)
    assert held.code is None  # compiled only once it has been sent twice
    held.offer(path, source)
    assert held.code is not None
    return held


def compiled(source: bytes, path: str = PATH) -> types.CodeType:
    return compile(source, path, "exec", dont_inherit=True)


def same_as_compile(code: types.CodeType, source: bytes) -> bool:
    """Equal to the file's compile but for where the changed statement ends (the runner's
    second difference); held code objects are compared by value."""
    full = compiled(source)
    starts = list(code.co_lines()) == list(full.co_lines())
    return starts and importing._same_code(code.replace(co_linetable=full.co_linetable), full)


def test_a_program_sent_again_is_the_held_code_itself() -> None:
    held = held_for(BASE)
    assert importing._held_code(held, BASE, PATH) is held.code
    assert importing._held_code(held, BASE, "/elsewhere/module.py") is None  # another file's


def test_a_change_inside_one_function_or_method_is_compiled_alone() -> None:
    held = held_for(BASE)
    for old, new in (
        (b"return item\n", b"return None\n"),  # a function's body
        (b'return "box"', b'return "bag"'),  # a method's: the class statement is recompiled
        (b"# the first item", b"# another comment"),
    ):
        program = BASE.replace(old, new)
        code = importing._patched(held, program, PATH)
        assert code is not None and same_as_compile(code, program)
        assert not importing._same_code(code, compiled(BASE)) or old.startswith(b"#")


def test_changes_the_patch_cannot_stand_for_are_compiled_whole() -> None:
    held = held_for(BASE)
    for program in (
        BASE.replace(b"default=None", b"default=0"),  # module-level code of the def
        BASE.replace(b"LIMIT = 3", b"LIMIT = 4"),  # a statement that is not a def or class
        BASE.replace(b"return item\n", b"return item\n\n"),  # a line more
        BASE.replace(b"return default", b"return 1").replace(b"return LIMIT", b"return 2"),
    ):
        assert importing._patched(held, program, PATH) is None
    marked = b"# -*- coding: latin-1 -*-\n" + BASE
    assert importing._patched(held_for(marked), marked.replace(b"item\n", b"None\n"), PATH) is None


def test_equal_constants_of_a_patched_statement_are_other_objects() -> None:
    """The first difference the runner names, shown: the file's compile shares one constant
    between two functions, the patched code does not."""
    shared = b'    return "shared, not a name"\n'
    base = b"def a():\n" + shared + b"\n\ndef b():\n" + shared
    program = base.replace(b"def b():", b"def b(): ")
    code = importing._patched(held_for(base), program, PATH)
    assert code is not None
    namespace: dict[str, object] = {}
    exec(code, namespace)
    whole: dict[str, object] = {}
    exec(compiled(program), whole)
    assert whole["a"]() is whole["b"]()  # type: ignore[operator]
    assert namespace["a"]() is not namespace["b"]()  # type: ignore[operator]


def test_gen_s_programs_of_the_bundled_batch_are_patched_as_the_file_compiles() -> None:
    """Every mutant and degenerate program of every bundled task: same line count as the
    original; where patched (most), the file's compile but for the named differences."""
    batch = Batch.open(BUNDLED)
    patched = total = 0
    for ident in batch.ids:
        task = batch.load(ident)
        original = task.original_source()
        held = held_for(original)
        programs = [spliced_mutant(task, mutant) for mutant in task_mutants(task)]
        programs += [with_body(task, body) for body in ("return None", "return 0")]
        for program in programs:
            assert program is not None and program.count(b"\n") == original.count(b"\n")
            code = importing._patched(held, program, PATH)
            total += 1
            if code is not None:
                patched += 1
                assert same_as_compile(code, program), (ident, program)
    assert total > 500 and patched >= 0.95 * total, (patched, total)
