"""Reading parameters, annotations and doctest literals from a target's own text."""

from __future__ import annotations

import ast

from replicate.core.records import CallKind, Target
from replicate.inputs.signature import doctest_calls, doctest_literals, parse_signature
from tests.targets import made_target


def _target(signature: str, kind: CallKind = "function", docstring: str | None = None) -> Target:
    method = kind != "function"
    return made_target(
        "Box.f" if method else "f",
        kind,
        signature,
        docstring=docstring,
        class_name="Box" if method else None,
    )


def test_positional_keyword_and_variadic_parameters() -> None:
    sig = parse_signature(_target("def f(a: int, b=2, *rest: str, key: list[int], **more):"))
    assert sig is not None
    assert [p.name for p in sig.positional] == ["a", "b"]
    assert sig.vararg is not None and sig.vararg.name == "rest"
    assert [p.name for p in sig.keyword] == ["key"]
    assert sig.varkw is not None and sig.varkw.name == "more"
    param = sig.parameter(0)
    assert param is not None and ast.unparse(param.annotation or ast.Constant(None)) == "int"
    assert sig.parameter(5) is sig.vararg  # beyond the named positionals
    key = sig.parameter("key")
    assert key is not None and key.kind == "keyword"
    assert sig.parameter("other") is sig.varkw
    assert sig.first_argument("function") == "a"


def test_slots_of_methods_and_classmethods() -> None:
    method = parse_signature(_target("    def f(self, x, y):", "method"))
    assert method is not None and method.parameter(0) is not None
    assert method.parameter(0).name == "self"  # type: ignore[union-attr]
    assert method.first_argument("method") == "x"
    decorated = "    @classmethod\n    def f(cls, x):"
    klass = parse_signature(_target(decorated, "classmethod"))
    assert klass is not None and [p.name for p in klass.positional] == ["x"]
    assert klass.first_argument("classmethod") == "x"
    bare = parse_signature(_target("    def f(self):", "method"))
    assert bare is not None and bare.first_argument("method") is None
    star = parse_signature(_target("def f(*items):"))
    assert star is not None and star.first_argument("function") == "items"


def test_plain_literal_defaults() -> None:
    text = "def f(a, b=None, c=-1.5, d=[], /, e=(1,), *, k='x', m, n=SENTINEL):"
    sig = parse_signature(_target(text))
    assert sig is not None
    found = {p.name: p.literal_default() for p in (*sig.positional, *sig.keyword)}
    assert found == {
        "a": (False, None),
        "b": (True, None),
        "c": (True, -1.5),
        "d": (False, []),  # a mutable default is not a plain literal to pass
        "e": (False, (1,)),
        "k": (True, "x"),
        "m": (False, None),
        "n": (False, None),  # a name, not a literal
    }
    decorated = "    @classmethod\n    def f(cls, x, y=0):"
    klass = parse_signature(_target(decorated, "classmethod"))
    assert klass is not None and [p.literal_default() for p in klass.positional] == [
        (False, None),
        (True, 0),
    ]


def test_multiline_signature_and_garbage() -> None:
    sig = parse_signature(_target("def f(\n    a,\n    b,\n) -> int:"))
    assert sig is not None and [p.name for p in sig.positional] == ["a", "b"]
    assert parse_signature(_target("this is not python")) is None


def test_doctest_calls_and_literals() -> None:
    doc = """Clamp.

    >>> f(5, 0, low=-1)
    5
    >>> [f(k, 1) for k in range(3)]
    [1, 1, 2]
    >>> f(x, 2)
    >>> other(9)
    >>> f(
    ...     'a', 2)
    'b'
    """
    target = _target("def f(a, b, low=0):", docstring=doc)
    calls = doctest_calls(target)
    assert [(c.args, c.kwargs) for c in calls] == [((5, 0), (("low", -1),)), (("a", 2), ())]
    literals = doctest_literals(target)
    assert {5, 0, -1, 9, "a", "b"} <= set(literals)
    assert doctest_calls(_target("def f():")) == []
