"""Code examples shown without doctest prompts, written as doctest files the harvest runs.

Many libraries show their calls as plain code: a docstring's reST literal block (`Example::`
then indented code, treelib 1.8.0's `Tree`), a `.. code-block:: python` directive, a Markdown
```` ```python ```` fence in the README. Those are calls the project wrote down, as doctest
examples are (`harvest/documented.py`), without the prompts. Each block that parses as Python
is written statement by statement as a doctest example (`>>> ` then `... ` lines) into one
text file per source file, under `EXAMPLES_DIR` in the harvest's copy of the tree; the file
runs as a doctest (one namespace per source file: a later block may use what an earlier one
built), a docstring's file first importing its module and `from module import *` (examples
leave their imports out). Blocks holding `>>>` are left to doctest itself. Outputs are not
compared (the hidden original decides every expected outcome), and a statement that raises
does not stop the ones after it (the harvest runs doctests past failures).

Only files are read here, nothing runs: the doctest files run in the sandbox with the tests.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate.core import PARSE_LOCK
from replicate.harvest.declared import DeclaredPath
from replicate.harvest.documented import MAX_BYTES, PROMPT, documentation_files
from replicate.harvest.test_code import is_test_file

EXAMPLES_DIR = ".replicate-examples"
DOCSTRING_SOURCE = "docstring code examples"
DOCUMENT_SOURCE = "documentation code examples"
MAX_FILES = 200
MAX_BLOCKS = 400  # per file
MAX_BLOCK_LINES = 200
MAX_IMPORTS = 5  # of the library's top-level names, before a document's examples
LITERAL = re.compile(r"(::|^\s*\.\. (code-block|code|sourcecode)::\s*(python3?|py|pycon)?)\s*$")
FENCE = re.compile(r"^\s*```+\s*(python3?|py)\s*$")


@dataclass(frozen=True)
class ExampleFile:
    """A doctest file made from one source file's code examples."""

    path: str  # repository-relative, under EXAMPLES_DIR
    text: str
    source: str  # DOCSTRING_SOURCE or DOCUMENT_SOURCE


def write_examples(tree: Path, source_roots: Sequence[str]) -> tuple[DeclaredPath, ...]:
    """Write the doctest files of `example_files` into `tree` (the harvest's own copy)."""
    written = []
    for example in example_files(tree, source_roots):
        path = tree / example.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(example.text, encoding="utf-8")
        except OSError:  # a name past the file system's limit, say: that file's examples only
            continue
        written.append(DeclaredPath(example.path, example.source))
    return tuple(written)


def example_files(tree: Path, source_roots: Sequence[str]) -> tuple[ExampleFile, ...]:
    """The doctest files of the library's docstrings, then of its documentation files."""
    found: list[ExampleFile] = []
    for root, path in _modules(tree, source_roots):
        module = ".".join(path.relative_to(tree / root).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        blocks = [b for doc in _docstrings(path) for b in literal_blocks(doc)]
        preamble = [f"import {module}", f"from {module} import *"]
        _add(found, tree, path, blocks, preamble, DOCSTRING_SOURCE)
    imports = [f"import {name}" for name in _top_level(tree, source_roots)]
    for path in _documents(tree):
        text = _read(path)
        blocks = fenced_blocks(text) if path.suffix == ".md" else literal_blocks(text)
        _add(found, tree, path, blocks, imports, DOCUMENT_SOURCE)
    return tuple(found[:MAX_FILES])


def literal_blocks(text: str) -> list[str]:
    """reST literal blocks (after a line ending `::`) and code directives, dedented."""
    lines = text.expandtabs().split("\n")
    blocks: list[str] = []
    for at, line in enumerate(lines):
        if LITERAL.search(line) and not line.strip().startswith(">>>"):
            block = _indented_after(lines, at, _indent(line))
            if block:
                blocks.append(block)
    return blocks[:MAX_BLOCKS]


def fenced_blocks(text: str) -> list[str]:
    """Markdown code fences marked Python."""
    blocks: list[str] = []
    lines = text.split("\n")
    at = 0
    while at < len(lines):
        if FENCE.match(lines[at]):
            end = next(
                (k for k in range(at + 1, len(lines)) if lines[k].strip().startswith("```")),
                len(lines),
            )
            blocks.append(textwrap.dedent("\n".join(lines[at + 1 : end])))
            at = end
        at += 1
    return blocks[:MAX_BLOCKS]


def as_doctest(blocks: Sequence[str], preamble: Sequence[str]) -> str:
    """The blocks that parse as Python (and show no prompt), statement by statement."""
    examples = [f">>> {line}" for line in preamble]
    for block in blocks:
        if PROMPT.search(block) or block.count("\n") >= MAX_BLOCK_LINES:
            continue
        try:
            with PARSE_LOCK:
                parsed = ast.parse(block)
        except (SyntaxError, ValueError):
            continue
        lines, done = block.split("\n"), 0
        for statement in parsed.body:
            first = min([statement.lineno, *(d.lineno for d in _decorators(statement))])
            if first <= done:  # `a = 1; b = 2`: that line is written once, with the first
                continue
            done = statement.end_lineno or first
            source = lines[first - 1 : done]
            examples += [f">>> {source[0]}", *(f"... {line}" for line in source[1:])]
            if len(source) > 1:
                examples.append("...")  # a compound statement's end
    return "\n".join(examples) + "\n" if len(examples) > len(preamble) else ""


def _add(
    found: list[ExampleFile],
    tree: Path,
    path: Path,
    blocks: list[str],
    preamble: list[str],
    source: str,
) -> None:
    text = as_doctest(blocks, preamble)
    if text:
        name = path.relative_to(tree).as_posix().replace("/", "__")
        found.append(ExampleFile(f"{EXAMPLES_DIR}/{name}.txt", text, source))


def _decorators(statement: ast.stmt) -> list[ast.expr]:
    return list(getattr(statement, "decorator_list", []))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _indented_after(lines: list[str], at: int, base: int) -> str:
    """The lines after `at` indented deeper than `base` (blank lines inside kept), dedented;
    a directive's option lines (`:linenos:`) left out."""
    taken: list[str] = []
    for line in lines[at + 1 :]:
        if line.strip() and _indent(line) <= base:
            break
        taken.append(line)
    body = [line for line in taken if not re.match(r"^\s*:\w[\w-]*:", line)]
    return textwrap.dedent("\n".join(body)).strip("\n")


def _modules(tree: Path, source_roots: Sequence[str]) -> Iterator[tuple[str, Path]]:
    """The library's modules: those of each source root and of the packages in it, walked down
    through folders that hold an `__init__.py` only (never a virtualenv or a data folder); no
    test module, no `setup.py`."""
    for root in source_roots:
        base = tree / root
        if base.is_dir() and not base.is_symlink():
            yield from ((root, path) for path in _package_files(tree, base))


def _package_files(tree: Path, folder: Path) -> Iterator[Path]:
    for child in sorted(folder.iterdir()):
        if child.name.startswith(".") or child.is_symlink() or not _named(child):
            continue
        if child.is_dir() and (child / "__init__.py").is_file():
            yield from _package_files(tree, child)
        elif _library_module(tree, child):
            yield child


def _library_module(tree: Path, path: Path) -> bool:
    return (
        path.suffix == ".py"
        and path.is_file()
        and path.name != "setup.py"
        and not is_test_file(str(path), str(tree))
    )


def _named(path: Path) -> bool:
    return (path.stem if path.suffix == ".py" else path.name).isidentifier()


def _top_level(tree: Path, source_roots: Sequence[str]) -> list[str]:
    """The library's top-level packages (its modules where it has none: a root-level module
    beside packages is more often a script), which a README's examples use unimported
    (`@backoff.on_exception(...)`)."""
    packages, modules = [], []
    for root in source_roots:
        base = tree / root
        for child in sorted(base.iterdir()) if base.is_dir() and not base.is_symlink() else []:
            if not _named(child) or is_test_file(str(child), str(tree)):
                continue
            if child.is_dir() and (child / "__init__.py").is_file():
                packages.append(child.name)
            elif child.suffix == ".py" and child.stem != "setup":
                modules.append(child.stem)
    return (packages or modules)[:MAX_IMPORTS]


def _docstrings(path: Path) -> list[str]:
    try:
        with PARSE_LOCK:
            parsed = ast.parse(_read(path))
    except (SyntaxError, ValueError):
        return []
    nodes = [parsed, *(n for n in ast.walk(parsed) if isinstance(n, _DOCUMENTED))]
    return [doc for node in nodes if (doc := ast.get_docstring(node))]


_DOCUMENTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _documents(tree: Path) -> Iterator[Path]:
    return (p for p in documentation_files(tree) if p.suffix in (".md", ".rst"))


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
