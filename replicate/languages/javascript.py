"""The JavaScript and TypeScript adapter: discovery over a source tree, stubbing and splicing.

One class serves both names ("javascript", "typescript"): a repository of either language mixes
both kinds of file, and each file is parsed with the grammar its extension names
(`javascript_extract.grammar_for`). Export's `--context class` outline is
`javascript_context`'s, the memorisation signal's tokens `javascript_tokens`'.
"""

from __future__ import annotations

from pathlib import Path

from replicate.core import SkippedFile, Target
from replicate.errors import ReplicateError
from replicate.languages.base import Extraction
from replicate.languages.javascript_context import outline
from replicate.languages.javascript_extract import extract_targets, parse_source
from replicate.languages.javascript_layout import iter_source_files, library_literals
from replicate.languages.javascript_splice import (
    replace_definition,
    splice,
    stub_bodies,
    stub_source,
)
from replicate.languages.javascript_tokens import body_tokens
from replicate.languages.syntax import first_error_line

MAX_FILE_BYTES = 2_000_000


def discover_scripts(root: Path) -> Extraction:
    """Targets of every JS/TS source file under `root` (node_modules, build output, tests,
    minified files and `.d.ts` declarations left out). `source_files` counts the files."""
    if not root.is_dir():
        raise ReplicateError(f"not a directory: {root}")
    return Extraction.of(
        (_extract_file(path, rel) for path, rel in iter_source_files(root)), (".",)
    )


def _extract_file(path: Path, rel: str) -> list[Target] | SkippedFile:
    try:
        data = path.read_bytes()
    except OSError as exc:
        return SkippedFile(path=rel, reason=f"unreadable: {exc.strerror}")
    if len(data) > MAX_FILE_BYTES:
        return SkippedFile(path=rel, reason=f"too large ({len(data)} bytes)")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return SkippedFile(path=rel, reason="not UTF-8")
    tree = parse_source(data, rel)
    line = first_error_line(tree)
    if line is not None:
        return SkippedFile(path=rel, reason=f"does not parse (tree-sitter): line {line}")
    return extract_targets(data, tree, rel)


class ScriptLanguage:
    """JavaScript/TypeScript through tree-sitter: functions, bound arrows and class methods."""

    def __init__(self, name: str = "javascript") -> None:
        self.name = name

    discover = staticmethod(discover_scripts)
    stub = staticmethod(stub_source)
    stub_bodies = staticmethod(stub_bodies)
    splice = staticmethod(splice)
    replace_definition = staticmethod(replace_definition)
    literals = staticmethod(library_literals)

    outline = staticmethod(outline)

    body_tokens = staticmethod(body_tokens)


def javascript_language() -> ScriptLanguage:
    return ScriptLanguage("javascript")


def typescript_language() -> ScriptLanguage:
    return ScriptLanguage("typescript")
