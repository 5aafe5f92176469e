from __future__ import annotations

from pathlib import Path

import pytest

from replicate.core import Target
from replicate.languages import Language, get_language
from replicate.languages.javascript import ScriptLanguage
from replicate.languages.javascript_extract import extract_targets, module_name, parse_source
from tests.unit.languages.script_sources import JS, JS_TARGETS, TS, TS_TARGETS


def targets_of(source: str, path: str) -> dict[str, Target]:
    data = source.encode()
    return {t.qualname: t for t in extract_targets(data, parse_source(data, path), path)}


def test_both_names_build_the_one_script_adapter() -> None:
    for name in ("javascript", "typescript"):
        adapter = get_language(name)
        assert isinstance(adapter, ScriptLanguage) and isinstance(adapter, Language)
        assert adapter.name == name


def test_javascript_targets_and_what_is_left_out() -> None:
    found = targets_of(JS, "lib/shapes.js")
    # left out: constructor, getter, setter, #private, the empty body, the name bound twice,
    # the anonymous `module.exports = function`, the nested `inner`
    assert tuple(found) == JS_TARGETS


def test_javascript_target_fields() -> None:
    found = targets_of(JS, "lib/shapes.js")
    add = found["add"]
    assert (add.module, add.kind, add.symbol) == ("lib/shapes", "function", "lib/shapes.add")
    assert add.docstring == "/**\n * Adds two numbers.\n */"
    assert add.signature == "export function add(a, b)"
    assert (add.def_span.start_line, add.def_span.end_line) == (6, 8)
    assert JS.encode()[add.body_span.start_byte : add.body_span.end_byte].startswith(b"{\n  return")
    assert add.body_statements == 1 and add.body_indent == ""
    assert found["Shape.unit"].kind == "staticmethod"
    area = found["Shape.area"]
    assert (area.kind, area.class_name, area.body_indent) == ("method", "Shape", "  ")
    frames = found["Shape.frames"]
    assert frames.is_async and frames.is_generator
    assert found["counter"].is_generator and found["gen"].is_generator
    assert found["later"].is_async and found["later"].body_statements == 2
    # a second declarator of one statement starts at its own name
    assert found["triple"].signature == "triple = function (x)"
    double = found["double"]
    assert JS.encode()[double.body_span.start_byte : double.body_span.end_byte] == b"x * 2"


def test_typescript_targets_skip_signatures_and_abstract_methods() -> None:
    found = targets_of(TS, "src/store.ts")
    assert tuple(found) == TS_TARGETS
    assert found["Store.put"].decorators == ("@logged",)
    assert found["Store.put"].signature.startswith("@logged\n  put(key: string, value: T): void")
    assert found["pick"].signature == "export function pick(a: any): any"
    assert found["clamp"].body_statements == 1


@pytest.mark.parametrize("path", ["a.tsx", "a.ts", "a.mts", "a.js", "a.cjs", "a.mjs", "a.jsx"])
def test_each_extension_parses_with_its_grammar(path: str) -> None:
    source = "export const f = (a) => { return <b>{a}</b>; };\n" if "x" in path else TS
    if path.endswith(("js", "jsx")) and "x" not in path:
        source = JS
    assert targets_of(source, path), path


def test_module_name_is_the_path_without_extension() -> None:
    assert module_name("classes/semver.js") == "classes/semver"
    assert module_name("src/a.b.ts") == "src/a.b"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_discover_skips_dependencies_builds_tests_and_declarations(tmp_path: Path) -> None:
    one = "export function f(a) { return a; }\n"
    write(
        tmp_path,
        {
            "src/index.js": one,
            "src/store.ts": TS,
            "src/broken.js": "function (\n",
            "node_modules/dep/index.js": one,
            "dist/index.js": one,
            "build/index.js": one,
            "lib/index.min.js": one,
            "src/index.test.js": one,
            "src/store.spec.ts": one,
            "src/__tests__/a.js": one,
            "test/a.js": one,
            "tests/a.js": one,
            "types/index.d.ts": "export declare function f(a: number): number;\n",
            ".hidden/a.js": one,
        },
    )
    extraction = get_language("javascript").discover(tmp_path)
    assert sorted({t.path for t in extraction.targets}) == ["src/index.js", "src/store.ts"]
    assert extraction.source_files == 3  # the files considered, the skipped one included
    (skipped,) = extraction.skipped_files
    assert skipped.path == "src/broken.js" and skipped.reason.startswith("does not parse")


def test_literals_come_from_the_library_not_its_tests(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "index.js": "const k = opts['hookwrapper'] || `plain`;\n",
            "test/a.js": "t('only-in-tests');\n",
        },
    )
    literals = get_language("javascript").literals(tmp_path)
    assert {"hookwrapper", "plain"} <= literals and "only-in-tests" not in literals


def test_the_class_context_shows_the_target_its_class_and_what_is_not_a_definition() -> None:
    target = targets_of(JS, "src/shapes.js")["Shape.area"]
    shown = get_language("javascript").outline(JS.encode(), target).decode()
    assert shown.startswith('import { helper } from "./helper.js";\n')
    assert (
        'area() { throw new Error("not implemented"); }' in shown and "this.w * this.w" not in shown
    )
    assert "static unit() { return new Shape(1); }" in shown  # its class, whole
    assert "return a + b" not in shown and "function outer" not in shown  # other definitions
    # each run of left-out lines one comment, numbered as the original file numbers them
    lines = JS.splitlines()
    assert lines[5].startswith("export function add") and lines[23].startswith("module.exports =")
    assert "// ... (lines 6-24 of this file not shown)\n" in shown
    assert (
        lines[37] == "function outer() {" and "// ... (lines 38-41 of this file not shown)" in shown
    )

    pick = targets_of(TS, "src/store.ts")["pick"]
    shown = get_language("typescript").outline(TS.encode(), pick).decode()
    assert shown.startswith("// ... (lines 1-11 of this file not shown)\n")  # the class Store
    assert "export function pick(a: string): string;" in shown  # its overloads
    assert "Math.min" not in shown and "(lines 19-19 of this file not shown)" in shown


def test_a_doc_comment_is_the_jsdoc_block_just_above() -> None:
    source = (
        "/** one blank line below */\n\nfunction near() { return 1; }\n"
        "/** two blank lines below */\n\n\nfunction far() { return 2; }\n"
        "// a line comment\nfunction plain() { return 3; }\n"
        "/** on the export */\nexport default class Box { open() { return 4; } }\n"
    )
    found = targets_of(source, "a.js")
    assert found["near"].docstring == "/** one blank line below */"
    assert found["far"].docstring is None and found["plain"].docstring is None
    assert found["Box.open"].docstring is None  # a method's own comment, not its class's


def test_a_comment_after_a_block_without_semicolon_is_not_in_the_body() -> None:
    source = "const f = (a) => { return a } // trailing\nconst g = 1\n"
    body = targets_of(source, "a.js")["f"].body_span
    assert source[body.start_byte : body.end_byte] == "{ return a }"
