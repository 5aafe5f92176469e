"""The JavaScript/TypeScript adapter on real, pinned npm packages: ms (CommonJS functions),
camelcase (ESM), semver (CommonJS with classes); and corpus/tslib, our own TypeScript ES module."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.core import SpliceError, Target
from replicate.languages import detect_language, get_language
from replicate.languages.javascript_detect import Detection, TestRunner
from replicate.languages.javascript_extract import parse_source
from replicate.languages.javascript_splice import STUB_BODY
from replicate.languages.syntax import first_error_line
from tests.integration.languages.conftest import TSLIB

JS = get_language("javascript")


def targets(root: Path) -> dict[str, Target]:
    return {f"{t.path}:{t.qualname}": t for t in JS.discover(root).targets}


def test_ms(npm_repos: dict[str, Path]) -> None:
    found = targets(npm_repos["ms"])
    assert sorted(found) == [f"index.js:{n}" for n in ("fmtLong", "fmtShort", "parse", "plural")]
    assert found["index.js:parse"].docstring is not None
    assert found["index.js:parse"].docstring.startswith("/**\n * Parse the given `str`")
    assert detect_language(npm_repos["ms"]) == Detection("javascript", TestRunner.MOCHA)


def test_camelcase(npm_repos: dict[str, Path]) -> None:
    found = targets(npm_repos["camelcase"])
    names = ("camelCase", "postProcess", "preserveCamelCase", "preserveConsecutiveUppercase")
    assert sorted(found) == [f"index.js:{n}" for n in names]
    assert (
        found["index.js:camelCase"].signature == "export default function camelCase(input, options)"
    )
    assert detect_language(npm_repos["camelcase"]) == Detection("javascript", TestRunner.AVA)


def test_semver(npm_repos: dict[str, Path]) -> None:
    extraction = JS.discover(npm_repos["semver"])
    assert (extraction.source_files, len(extraction.targets), extraction.skipped_files) == (
        48,
        80,
        (),
    )
    found = targets(npm_repos["semver"])
    compare = found["classes/semver.js:SemVer.compare"]
    assert (compare.kind, compare.class_name, compare.module) == (
        "method",
        "SemVer",
        "classes/semver",
    )
    assert "functions/satisfies.js:satisfies" in found
    # constructors and getters are no targets
    assert not any(key.endswith((".constructor", "Comparator.ANY")) for key in found)
    assert detect_language(npm_repos["semver"]) == Detection("javascript", TestRunner.TAP)


def test_typescript_sources_of_corpus_tslib() -> None:
    extraction = get_language("typescript").discover(TSLIB)
    found = {f"{t.path}:{t.qualname}" for t in extraction.targets}  # test/ files are no targets
    assert {path.split(":")[0] for path in found} == {
        f"src/{name}.ts" for name in ("cache", "duration", "text", "version")
    }
    assert "src/text.ts:truncate" in found  # an exported arrow function
    assert "src/cache.ts:BoundedCache.hitRate" in found  # a class method
    assert not any(key.endswith(("constructor", "size")) for key in found)  # nor a getter
    assert extraction.skipped_files == ()
    assert detect_language(TSLIB) == Detection("typescript", TestRunner.NODE_TEST)


@pytest.mark.parametrize("package", ["ms", "camelcase", "semver", "corpus/tslib"])
def test_stub_and_splice_every_target(package: str, npm_repos: dict[str, Path]) -> None:
    root = TSLIB if package == "corpus/tslib" else npm_repos[package]
    adapter = get_language("typescript")
    for target in adapter.discover(root).targets:
        source = (root / target.path).read_bytes()
        stubbed = adapter.stub(source, target)
        assert first_error_line(parse_source(stubbed, target.path)) is None, target.qualname
        start, end = target.body_span.start_byte, target.body_span.end_byte
        assert stubbed == source[:start] + STUB_BODY + source[end:]
        definition = source[target.def_span.start_byte : target.def_span.end_byte].decode()
        assert adapter.splice(stubbed, definition, target) == source, target.qualname
        assert adapter.splice(stubbed, source.decode(), target) == source, target.qualname
        with pytest.raises(SpliceError):
            adapter.splice(stubbed, definition + "\n)", target)


def test_a_bare_definition_and_a_whole_file_on_semver(npm_repos: dict[str, Path]) -> None:
    found = targets(npm_repos["semver"])
    target = found["classes/semver.js:SemVer.compareMain"]
    source = (npm_repos["semver"] / target.path).read_bytes()
    stubbed = JS.stub(source, target)
    bare = "compareMain (other) {\n    return 0\n  }"
    result = JS.splice(stubbed, bare, target)
    assert result == stubbed.replace(STUB_BODY, b"{\n    return 0\n  }")
    whole = source.decode().replace("compareMain (other) {", "compareMain (other) {\n    // mine")
    assert JS.splice(stubbed, whole, target) == whole.encode()
