"""The mutator: one small change inside the body, compilable, distinct, deterministic."""

from __future__ import annotations

import ast

from replicate.gen.mutants import FEW, mutants

CALL_OPERATORS = {"call -> its first argument", "drop argument", "drop keyword argument"}

SOURCE = '''def pick(xs, n=2):
    """Even items above n, plus one."""
    out = []
    for x in xs:
        if x > n and x % 2 == 0:
            out.append(x + 1)
    return out
'''


def _run(text: str, *args: object) -> object:
    namespace: dict[str, object] = {}
    exec(compile(text, "<m>", "exec"), namespace)
    function = namespace["pick"]
    assert callable(function)
    try:
        return function(*args)
    except Exception as exc:  # noqa: BLE001 - a raised exception is an observable behaviour
        return type(exc)


def test_every_mutant_compiles_differs_and_keeps_the_docstring() -> None:
    found = mutants(SOURCE, limit=100)
    assert len(found) >= 12
    original = ast.unparse(ast.parse(SOURCE))
    texts = [m.text for m in found]
    assert len(set(texts)) == len(texts)
    for mutant in found:
        assert ast.unparse(ast.parse(mutant.text)) != original
        tree = ast.parse(mutant.text).body[0]
        assert (
            isinstance(tree, ast.FunctionDef)
            and ast.get_docstring(tree) == "Even items above n, plus one."
        )
        assert mutant.line >= 3


def test_operators_cover_the_catalogue() -> None:
    kinds = {m.operator.split(" ")[0] for m in mutants(SOURCE, limit=100)}
    assert {"swap", "constant", "negate", "delete", "return"} <= kinds


def test_limit_and_determinism() -> None:
    assert len(mutants(SOURCE, limit=3)) == 3
    assert mutants(SOURCE, limit=5, seed=1) == mutants(SOURCE, limit=5, seed=1)
    assert [m.text for m in mutants(SOURCE, 5, seed=1)] != [
        m.text for m in mutants(SOURCE, 5, seed=2)
    ]


def test_most_mutants_change_behaviour_on_some_input() -> None:
    inputs = [([1, 2, 3, 4, 5, 6],), ([],), ([4, 8, 3], 3), ([2, 2],)]
    expected = [_run(SOURCE, *args) for args in inputs]
    found = mutants(SOURCE, limit=100)
    killed = [m for m in found if [_run(m.text, *args) for args in inputs] != expected]
    assert len(killed) >= 0.8 * len(found)


def test_exception_messages_are_not_mutated() -> None:
    source = """def check(x):
    if x < 0:
        raise ValueError(f"negative: {x}" + "!")
    assert x != 3, "three"
    return "ok"
"""
    found = mutants(source, limit=100)
    strings = [m for m in found if m.operator == "constant string changed"]
    assert len(strings) == 1 and "return 'okx'" in strings[0].text  # the returned string only
    for mutant in found:
        if mutant.operator != "delete statement":
            assert "'three'" in mutant.text and "f'negative: {x}'" in mutant.text
    assert {m.operator for m in found} >= {"swap Lt->LtE", "constant 0->1", "constant 3->4"}


ONE_LINE = """def split(self, sep=None, maxsplit=-1):
    return [self.__class__(v) for v in super().split(sep, maxsplit)]
"""


def test_a_one_line_body_gets_the_call_operators_only_when_asked() -> None:
    standard = mutants(ONE_LINE)
    assert len(standard) < FEW  # why the call operators exist: two sites are too few to measure
    assert not {m.operator for m in standard} & CALL_OPERATORS
    extra = {m.text.splitlines()[1].strip() for m in mutants(ONE_LINE, extra=True)}
    assert {m.text.splitlines()[1].strip() for m in standard} < extra
    assert "return [v for v in super().split(sep, maxsplit)]" in extra  # the call's argument
    assert "return [self.__class__(v) for v in super().split(sep)]" in extra  # one fewer
    assert "return [self.__class__() for v in super().split(sep, maxsplit)]" in extra


def test_the_call_operators_leave_starred_and_spread_arguments_alone() -> None:
    text = "def f(xs, kw):\n    return g(*xs, **kw)\n"
    operators = {m.operator for m in mutants(text, extra=True)}
    assert not operators & CALL_OPERATORS
