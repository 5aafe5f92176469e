"""Where the leak audit of a script task looks for the original (`gen/script_leaks.py`): each
place a built copy lives found, each look-alike that is none left alone (its control)."""

from __future__ import annotations

import json
from pathlib import Path

from replicate.gen.script_leaks import MIN_COPIED, built_copy, copied_body, copies_to_hide
from replicate.languages.javascript import discover_scripts

USES = "exports.double = function (n) { return n * 2; };\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in {"package.json": json.dumps({"name": "@me/tiny"}), **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_built_copies_are_found_where_they_live(tmp_path: Path) -> None:
    for n, rel in enumerate(
        [
            "dist/index.js",
            "build/cjs/index.cjs",
            "tiny.min.js",
            "node_modules/@me/tiny/index.js",
            "lib/index.js",  # a build folder when the target is not in it
            "dist/index.js.map",
        ]
    ):
        text = json.dumps({"sourcesContent": [USES]}) if rel.endswith(".map") else USES
        tree = _tree(tmp_path / str(n), {"src/index.js": "", rel: text})
        assert built_copy(tree, "src/index.js", "double") == tree / rel, rel


def test_what_is_no_built_copy_is_left_alone(tmp_path: Path) -> None:
    for n, rel in enumerate(
        [
            "test/index.test.js",  # tests call the target by name
            "dist/index.d.ts",  # declarations hold no body
            "node_modules/other/index.js",  # another package
            "lib/helpers.js",  # lib/ holds the target: it is the source
            "dist/index.js.map",  # a map without the sources
        ]
    ):
        text = json.dumps({"names": ["double"]}) if rel.endswith(".map") else USES
        tree = _tree(tmp_path / str(n), {"lib/index.js": "", rel: text})
        assert built_copy(tree, "lib/index.js", "double") is None, rel
    tree = _tree(tmp_path / "other-name", {"src/index.js": "", "dist/index.js": USES})
    assert built_copy(tree, "src/index.js", "doubled") is None  # the word, not a part of one


def test_a_verbatim_copy_of_a_long_body_anywhere_is_found(tmp_path: Path) -> None:
    body = "const total = items.reduce((sum, item) => sum + item.price * item.count, 0);"
    assert len(body) > MIN_COPIED
    spaced = body.replace(" ", "\n   ")
    tree = _tree(tmp_path / "long", {"src/index.js": body, "examples/copy.js": spaced})
    assert copied_body(tree, "src/index.js", body.encode()) == tree / "examples/copy.js"
    alone = _tree(tmp_path / "alone", {"src/index.js": body, "examples/use.js": USES})
    assert copied_body(alone, "src/index.js", body.encode()) is None  # its own file aside
    short = _tree(tmp_path / "short", {"src/index.js": USES, "other.js": USES})
    assert copied_body(short, "src/index.js", b"return n * 2;") is None  # too common to tell


LONG = (
    "function double(n) {\n  const twice = n + n;\n  if (twice !== n * 2) throw new Error('no');\n"
    "  return twice;\n}\nexports.double = double;\n"
)


def test_gen_hides_built_compressed_and_copied_files_and_nothing_else(tmp_path: Path) -> None:
    files = {
        "src/index.js": LONG,
        "dist/index.js": USES,  # built, spells a target's name: hidden
        "lib/index.js": USES,  # extracted, so a source: kept (the audit drops its copies)
        "dist/other.js": "exports.triple = (n) => n * 3;\n",  # spells none: kept
        "build/renamed.js": LONG.replace("double", "d"),  # the body verbatim, renamed: hidden
        "test/index.test.js": LONG,  # a test may spell it out: kept
        "src/helper.js": "exports.x = 1;\n",  # a source file: kept
        "node_modules/@me/tiny/package.json": "{}",  # the package itself, published: hidden
    }
    tree = _tree(tmp_path, files)
    (tree / "dist/index.js.gz").write_bytes(b"\x1f\x8b")  # compressed: hidden unread
    targets = discover_scripts(tree).targets
    assert [t.qualname for t in targets if t.path == "src/index.js"] == ["double"]
    hidden = {p.relative_to(tree).as_posix() for p in copies_to_hide(tree, targets)}
    assert hidden == {
        "dist/index.js",
        "build/renamed.js",
        "dist/index.js.gz",
        "node_modules/@me/tiny/package.json",
    }
