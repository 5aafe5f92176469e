"""JavaScript/TypeScript mutants over tree-sitter: each operator's edits, byte-exact files that
parse, the same order for a seed, and definitions that `replace_definition` puts in place."""

from __future__ import annotations

import pytest

from replicate.core import Target
from replicate.languages.javascript_extract import extract_targets, parse_source
from replicate.languages.javascript_mutants import FEW, Mutant, mutant_file, mutants
from replicate.languages.javascript_splice import replace_definition
from replicate.languages.syntax import first_error_line
from tests.unit.languages.script_sources import JS, JS_TARGETS, TS, TS_TARGETS


def target_of(source: bytes, path: str, qualname: str) -> Target:
    found = extract_targets(source, parse_source(source, path), path)
    return next(t for t in found if t.qualname == qualname)


def edits(
    body: str, path: str = "a.js", head: str = "function f(a, b, c) "
) -> set[tuple[str, str]]:
    """(what was replaced, by what) for every mutant of `f`, whose body is `body`."""
    source = (head + body + "\n").encode()
    target = target_of(source, path, "f")
    return {
        (source[m.start_byte : m.end_byte].decode(), m.replacement.decode())
        for m in mutants(source, target, limit=1000)
    }


def operators(body: str, path: str = "a.js") -> list[str]:
    source = f"function f(a, b, c) {body}\n".encode()
    found = mutants(source, target_of(source, path, "f"), limit=1000)
    return sorted(m.operator for m in found)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{ return a + b - c; }", {("+", "-"), ("-", "+")}),
        ("{ return a * b / c % 2 ** a; }", {("*", "/"), ("/", "*"), ("%", "*"), ("**", "*")}),
    ],
)
def test_arithmetic(body: str, expected: set[tuple[str, str]]) -> None:
    assert edits(body) == expected


def test_equality_flips_the_boundary_and_the_direction() -> None:
    assert edits("{ return a < b; }") == {("<", "<="), ("<", ">=")}
    assert edits("{ return a >= b; }") == {(">=", ">"), (">=", "<")}
    assert edits("{ return a === b || a != c; }") == {
        ("===", "!=="),
        ("!=", "=="),
        ("||", "&&"),
    }


def test_logical() -> None:
    assert edits("{ return a && b ?? c; }") == {("&&", "||"), ("??", "&&")}


def test_conditions_made_constant() -> None:
    found = edits("{ if (a) { b(); } while (c) { a(); } return a ? b : c; }")
    assert {("(a)", "(true)"), ("(a)", "(false)"), ("(c)", "(false)")} <= found
    assert {("a", "true"), ("a", "false")} <= found  # the ternary's
    assert ("(c)", "(true)") not in found  # a loop made endless is a timeout, not a mutant


def test_for_and_do_conditions() -> None:
    found = edits("{ for (let i = 0; i < a; i++) b(i); do { c(); } while (a); }")
    assert ("i < a", "false") in found and ("(a)", "(false)") in found


def test_string_and_array_literals_emptied() -> None:
    found = edits('{ return ["x", a, `t${b}`, "", []]; }')
    assert found == {
        ('["x", a, `t${b}`, "", []]', "[]"),
        ('"x"', '""'),
        ("`t${b}`", "``"),
        ('""', '"x"'),
    }
    assert edits("{ return new Array(a, b); }") == {("(a, b)", "()")}


def test_block_removal_leaves_the_function_body() -> None:
    found = edits("{ if (a) { b(); c(); } return a; }")
    assert ("{ b(); c(); }", "{}") in found
    assert not any(new == "{}" and old.startswith("{ if") for old, new in found)


def test_optional_chaining() -> None:
    found = edits("{ return a?.b + c?.[0] + b?.(); }")
    assert {("?.", "."), ("?.", "")} <= {pair for pair in found if pair[0] == "?."}
    source = b"function f(a, b, c) { return a?.b + c?.[0] + b?.(); }\n"
    chained = [
        m for m in mutants(source, target_of(source, "a.js", "f"), 100) if "?." in m.operator
    ]
    texts = sorted(mutant_file(source, m).decode() for m in chained)
    assert [t.count("?.") for t in texts] == [2, 2, 2]
    assert any("a.b + c?.[0]" in t for t in texts) and any("c[0]" in t for t in texts)
    assert any("b()" in t and "b?.()" not in t for t in texts)


def test_update_and_unary() -> None:
    assert edits("{ a++; --b; }") == {("++", "--"), ("--", "++")}
    assert edits("{ return [-a, +b, ~c, !a, typeof b]; }") >= {
        ("-", "+"),
        ("+", "-"),
        ("~", ""),
        ("!", ""),
    }


def test_assignment_and_boolean() -> None:
    assert edits("{ a += 1; b ??= c; return true; }") == {
        ("+=", "-="),
        ("??=", "&&="),
        ("true", "false"),
    }


def test_a_removed_operator_does_not_join_its_neighbours() -> None:
    source = b"function f(a, b) { return!a + b+-a; }\n"
    found = mutants(source, target_of(source, "a.js", "f"), limit=100)
    files = {mutant_file(source, m) for m in found}
    assert b"function f(a, b) { return a + b+-a; }\n" in files
    assert b"function f(a, b) { return!a + b- -a; }\n" in files


def test_what_is_not_data_is_not_mutated() -> None:
    body = '{ "use strict"; const m = require("x"); if (!a) throw new TypeError("bad " + a);'
    body += " return { key: m }; }"
    found = edits(body)
    assert not any(old in ('"use strict"', '"x"', '"bad "') for old, _ in found)
    assert ("{ key: m }", "{}") in found and ("!", "") in found


def test_typescript_types_are_left_alone() -> None:
    head = "function f(a: number, b: 'x' | 'y'): Array<string> "
    found = edits(
        "{ const c: 'z' = 'z'; return [a + 1 as number, b] as Array<string>; }", "a.ts", head
    )
    assert ("'z'", "''") in found and ("+", "-") in found
    assert all("Array<" not in old and "|" not in old for old, _ in found)
    assert sum(1 for old, _ in found if old == "'z'") == 1  # the value's, not the type's


@pytest.mark.parametrize(
    ("path", "text", "qualname"),
    [("lib/shapes.js", JS, n) for n in JS_TARGETS] + [("src/store.ts", TS, n) for n in TS_TARGETS],
    ids=[f"js-{n}" for n in JS_TARGETS] + [f"ts-{n}" for n in TS_TARGETS],
)
def test_every_mutant_parses_changes_the_body_only_and_replaces_as_a_definition(
    path: str, text: str, qualname: str
) -> None:
    source = text.encode()
    target = target_of(source, path, qualname)
    found = mutants(source, target)
    span = target.body_span
    for mutant in found:
        assert span.start_byte <= mutant.start_byte <= mutant.end_byte <= span.end_byte
        mutated = mutant_file(source, mutant)
        assert first_error_line(parse_source(mutated, path)) is None
        assert mutated[: span.start_byte] == source[: span.start_byte]
        assert replace_definition(source, mutant.text, target) == mutated
    assert len({mutant_file(source, m) for m in found}) == len(found)
    assert [m.index for m in found] == list(range(len(found)))


def test_the_order_is_the_seeds_and_the_limit_takes_a_prefix() -> None:
    body = "{ if (a < b) { return a + b * c; } return a?.b ?? [c, 'd']; }"
    source = f"function f(a, b, c) {body}\n".encode()
    target = target_of(source, "a.js", "f")
    first = mutants(source, target, limit=100, seed=0)
    assert first == mutants(source, target, limit=100, seed=0)
    other = mutants(source, target, limit=100, seed=1)
    assert [m.operator for m in first] != [m.operator for m in other]
    assert {mutant_file(source, m) for m in first} == {mutant_file(source, m) for m in other}
    assert [(m.start_byte, m.replacement) for m in mutants(source, target, limit=5)] == [
        (m.start_byte, m.replacement) for m in first[:5]
    ]


def test_lines_are_the_original_files() -> None:
    source = b"// one\n\nfunction f(a) {\n  return a +\n    1;\n}\n"
    (found,) = mutants(source, target_of(source, "a.js", "f"))
    assert found == Mutant(
        0, "arithmetic + -> -", 4, found.text, found.start_byte, found.start_byte + 1, b"-"
    )
    assert found.text == "function f(a) {\n  return a -\n    1;\n}"


def test_a_target_not_where_it_says_has_no_mutants() -> None:
    source = b"function f(a) { return a + 1; }\n"
    target = target_of(source, "a.js", "f")
    assert mutants(b"\n\n" + source, target) == []


def test_the_extra_operators_for_a_body_of_few_sites() -> None:
    source = b"const f = (x) => g(x, 2);\nfunction h(a) { if (a) return; return k(a); }\n"
    f, h = extract_targets(source, parse_source(source, "a.js"), "a.js")
    assert len(mutants(source, f)) < FEW  # the standard operators find nothing here
    files = {mutant_file(source, m).split(b"\n")[0] for m in mutants(source, f, extra=True)}
    assert files == {
        b"const f = (x) => undefined;",
        b"const f = (x) => g(x);",
        b"const f = (x) => (x);",
    }
    found = {
        (m.operator, mutant_file(source, m).split(b"\n")[1]) for m in mutants(source, h, extra=True)
    }
    assert ("return undefined", b"function h(a) { if (a) return; return undefined; }") in found
    assert ("drop argument", b"function h(a) { if (a) return; return k(); }") in found
    assert not any(b"if (a) return undefined" in text for _, text in found)  # a bare return
