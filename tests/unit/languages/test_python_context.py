"""`--context signatures` and `--context class` for Python: what of a file a prompt shows."""

from __future__ import annotations

import ast
import textwrap

from replicate.core.records import Span, Target
from replicate.languages import get_language
from replicate.languages.python_extract import extract_targets, parse_tree

MODULE = textwrap.dedent(
    '''\
    """Accounts."""
    import os

    RATE = 3


    def helper(x):
        """Double it."""
        return x * 2


    # The account.
    class Account:
        """One account."""

        def deposit(self, amount):
            """Add money."""
            self.total += amount
            return self.total

        def withdraw(self, amount):
            self.total -= amount
            return self.total


    def report(account):
        return f"{account.total} at {RATE}"


    def outer(x):
        def inner(y):
            return y + 1
        return inner(x) * 7
    '''
).encode()


def targets() -> dict[str, Target]:
    found = extract_targets(MODULE, parse_tree(MODULE), "pkg/acc.py", "pkg.acc")
    return {t.qualname: t for t in found}


def body(target: Target) -> bytes:
    return MODULE[target.body_span.start_byte : target.body_span.end_byte]


def test_signatures_stubs_the_target_and_the_others_keeping_their_docstrings() -> None:
    found = targets()
    python = get_language("python")
    others = (found["helper"], found["Account.withdraw"], found["report"])
    shown = python.stub_bodies(MODULE, found["Account.deposit"], others)
    ast.parse(shown)  # still Python
    for target in (found["Account.deposit"], *others):
        assert body(target) not in shown
        assert target.signature.strip().encode() in shown
    assert b'"""Add money."""' in shown and b'"""Double it."""' in shown
    assert shown.count(b"raise NotImplementedError") == 4
    assert body(found["outer"]) in shown  # not a task of this batch: shown as written
    # the control: the plain stub hides only the target's own body
    plain = python.stub(MODULE, found["Account.deposit"])
    assert all(body(t) in plain for t in others)


def span_of(text: bytes) -> Span:
    start = MODULE.index(text)
    line = MODULE[:start].count(b"\n") + 1
    return Span(
        start_byte=start,
        end_byte=start + len(text),
        start_line=line,
        end_line=line + text.count(b"\n"),
    )


def test_signatures_keeps_a_body_that_holds_the_target_and_drops_one_inside_another() -> None:
    found = targets()
    python = get_language("python")
    outer = found["outer"]
    inner = outer.model_copy(  # a target nested in another's body (extraction takes none yet)
        update={
            "qualname": "outer.inner",
            "def_span": span_of(b"def inner(y):\n        return y + 1"),
            "body_span": span_of(b"return y + 1"),
        }
    )
    shown = python.stub_bodies(MODULE, inner, (outer,))
    assert b"def inner(y):" in shown and b"return inner(x) * 7" in shown  # outer kept
    assert b"return y + 1" not in shown
    shown = python.stub_bodies(MODULE, found["helper"], (outer, inner))
    assert body(outer) not in shown and b"def inner" not in shown
    assert shown.count(b"raise NotImplementedError") == 2  # inner went with outer's body


def test_class_shows_the_module_s_statements_and_the_class_that_holds_a_method() -> None:
    found = targets()
    python = get_language("python")
    target = found["Account.deposit"]
    shown = python.outline(MODULE, target).decode()
    ast.parse(shown)
    assert "import os" in shown and "RATE = 3" in shown and '"""Accounts."""' in shown
    assert "class Account:" in shown and "def withdraw(self, amount):" in shown
    assert "def helper" not in shown and "def report" not in shown and "def outer" not in shown
    # numbered as the repository's file is (the stub is shorter than the body it replaced)
    assert "# ... (lines 7-9 of this file not shown)" in shown
    assert "# ... (lines 26-33 of this file not shown)" in shown  # report and outer: one run
    assert "self.total += amount" not in shown  # the target itself is stubbed


def test_class_shows_a_function_alone_among_the_definitions() -> None:
    found = targets()
    python = get_language("python")
    target = found["report"]
    shown = python.outline(MODULE, target).decode()
    assert "def report(account):" in shown and "class Account" not in shown
    assert "def helper" not in shown and "RATE = 3" in shown
    lines = MODULE.decode().splitlines()
    numbers = [n for n, line in enumerate(lines, 1) if line.startswith(("def helper", "class A"))]
    assert f"# ... (lines {numbers[0]}-" in shown
