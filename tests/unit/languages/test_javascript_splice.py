from __future__ import annotations

import pytest

from replicate.core import SpliceError, Target
from replicate.languages.javascript_extract import extract_targets, parse_source
from replicate.languages.javascript_splice import (
    STUB_BODY,
    replace_definition,
    splice,
    stub_bodies,
    stub_source,
)
from replicate.languages.syntax import first_error_line
from tests.unit.languages.script_sources import JS, JS_TARGETS, TS, TS_TARGETS

CASES = [("lib/shapes.js", JS, name) for name in JS_TARGETS]
CASES += [("src/store.ts", TS, name) for name in TS_TARGETS]


def target_of(source: bytes, path: str, qualname: str) -> Target:
    found = extract_targets(source, parse_source(source, path), path)
    return next(t for t in found if t.qualname == qualname)


def prepared(text: str, path: str, qualname: str) -> tuple[bytes, Target, bytes]:
    """The file's bytes, the target and the file with the target stubbed."""
    source = text.encode()
    target = target_of(source, path, qualname)
    return source, target, stub_source(source, target)


def parses(source: bytes, path: str) -> bool:
    return first_error_line(parse_source(source, path)) is None


@pytest.mark.parametrize(("path", "text", "qualname"), CASES)
def test_stub_parses_and_changes_only_the_body(path: str, text: str, qualname: str) -> None:
    source = text.encode()
    target = target_of(source, path, qualname)
    stubbed = stub_source(source, target)
    assert parses(stubbed, path)
    start, end = target.body_span.start_byte, target.body_span.end_byte
    assert stubbed[:start] == source[:start]
    assert stubbed[start : start + len(STUB_BODY)] == STUB_BODY
    assert stubbed[start + len(STUB_BODY) :] == source[end:]


@pytest.mark.parametrize(("path", "text", "qualname"), CASES)
def test_splicing_the_original_back_is_byte_identical(path: str, text: str, qualname: str) -> None:
    source = text.encode()
    target = target_of(source, path, qualname)
    stubbed = stub_source(source, target)
    definition = source[target.def_span.start_byte : target.def_span.end_byte].decode()
    assert splice(stubbed, definition, target) == source
    assert splice(stubbed, text, target) == source  # the whole file
    assert replace_definition(source, definition, target) == source


def test_a_bare_method_is_placed_in_its_class() -> None:
    _, target, stubbed = prepared(JS, "lib/shapes.js", "Shape.area")
    result = splice(stubbed, "area() {\n  return 42;\n}", target)
    assert result == stubbed.replace(STUB_BODY, b"{\n  return 42;\n}")
    fenced = "Here:\n```js\nclass Shape {\n  area() { return 7; }\n}\n```\n"
    assert splice(stubbed, fenced, target) == stubbed.replace(STUB_BODY, b"{ return 7; }")


def test_an_expression_body_where_a_block_is_needed_is_returned() -> None:
    _, target, stubbed = prepared(JS, "lib/shapes.js", "add")
    result = splice(stubbed, "const add = (a, b) => b + a;", target)
    assert b"export function add(a, b) { return b + a; }" in result
    assert parses(result, "lib/shapes.js")


def test_a_whole_file_candidate_is_the_file() -> None:
    _, target, stubbed = prepared(TS, "src/store.ts", "pick")
    rewritten = TS.replace("return a;\n}", "return [a][0];\n}") + "// mine\n"
    assert splice(stubbed, rewritten, target) == rewritten.encode()


def test_a_broken_candidate_is_refused_with_one_line() -> None:
    _, target, stubbed = prepared(JS, "lib/shapes.js", "add")
    with pytest.raises(SpliceError) as caught:
        splice(stubbed, "export function add(a, b) { return a + ; }", target)
    assert caught.value.reason == "the candidate does not parse: line 1"
    with pytest.raises(SpliceError, match="does not define add"):
        splice(stubbed, "function sub(a, b) { return a - b; }", target)


def test_the_result_is_checked_unless_told_not_to() -> None:
    source, target, stubbed = prepared(TS, "src/store.ts", "clamp")
    # a TypeScript-only body is fine in a .ts file ...
    assert parses(splice(stubbed, "const clamp = (v) => v as number;", target), "src/store.ts")
    # ... and placing the stub of another file's target is refused before anything
    with pytest.raises(SpliceError, match="does not hold the target's stub"):
        splice(source, "const clamp = (v) => v;", target)
    # positive control: a stubbed file broken elsewhere passes without the check
    broken = stubbed + b"\nfunction (\n"
    candidate = "const clamp = (v) => { return v; };"
    unchecked = splice(broken, candidate, target, check=False)
    assert not parses(unchecked, "src/store.ts")
    with pytest.raises(SpliceError) as caught:
        splice(broken, candidate, target)
    assert caught.value.reason == f"the spliced file does not parse: line {TS.count(chr(10)) + 2}"


def test_stub_bodies_stubs_every_given_target() -> None:
    source = JS.encode()
    area = target_of(source, "lib/shapes.js", "Shape.area")
    others = (
        target_of(source, "lib/shapes.js", "add"),
        target_of(source, "lib/shapes.js", "double"),
    )
    result = stub_bodies(source, area, others)
    assert result.count(STUB_BODY) == 3 and parses(result, "lib/shapes.js")


def test_a_crlf_file_gets_the_candidate_with_crlf_line_ends() -> None:
    source = JS.replace("\n", "\r\n").encode()
    target = target_of(source, "lib/shapes.js", "add")
    stubbed = stub_source(source, target)
    definition = source[target.def_span.start_byte : target.def_span.end_byte].decode()
    assert splice(stubbed, definition.replace("\r\n", "\n"), target) == source
    assert splice(stubbed, JS, target) == source  # the whole file, written with LF


def test_a_definition_of_the_same_kind_brings_its_parameters() -> None:
    _, target, stubbed = prepared(TS, "src/store.ts", "clamp")
    result = splice(stubbed, "const clamp = (v: number, lo = 0, hi = 1) => v;", target)
    assert b"export const clamp = (v: number, lo = 0, hi = 1) => v;\n" in result
    _, put, stubbed = prepared(TS, "src/store.ts", "Store.put")
    result = splice(stubbed, "async put(key: string) { return 1; }", put)
    assert b"  @logged\n  async put(key: string) { return 1; }\n" in result  # decorator kept
