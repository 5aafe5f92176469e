"""The Python adapter: discovery over a source tree, stubbing and splicing (docs/design.md
§1-§3)."""

from __future__ import annotations

import warnings
from pathlib import Path

from replicate.core import SkippedFile, Target, Token
from replicate.errors import ReplicateError
from replicate.languages.base import Extraction
from replicate.languages.python_classes import extract_classes
from replicate.languages.python_context import outline, stub_bodies
from replicate.languages.python_extract import extract_targets, first_error_line, parse_tree
from replicate.languages.python_installed import installed_root_modules
from replicate.languages.python_layout import (
    ModuleFile,
    encoding_problem,
    find_source_roots,
    generated_reason,
    iter_module_files,
    library_literals,
)
from replicate.languages.python_modules import file_module, module_tokens, splice_module
from replicate.languages.python_splice import replace_definition, splice, stub_source
from replicate.languages.python_splice_tree import syntax_problem
from replicate.languages.python_tokens import candidate_tokens, original_tokens

MAX_FILE_BYTES = 2_000_000


class PythonLanguage:
    """Python through tree-sitter: functions and methods, byte-exact spans."""

    name = "python"

    def discover(self, root: Path) -> Extraction:
        return discover_python(root)

    def stub(self, source: bytes, target: Target) -> bytes:
        return stub_source(source, target)

    def stub_bodies(self, source: bytes, target: Target, others: tuple[Target, ...]) -> bytes:
        return stub_bodies(source, target, others)

    def outline(self, source: bytes, target: Target) -> bytes:
        return outline(source, target)

    def splice(
        self, stubbed: bytes, candidate_text: str, target: Target, *, check: bool = True
    ) -> bytes:
        if target.kind == "module":  # the whole file, always
            return splice_module(stubbed, candidate_text, target, check=check)
        return splice(stubbed, candidate_text, target, check=check)

    def replace_definition(self, source: bytes, definition: str, target: Target) -> bytes | None:
        return replace_definition(source, definition, target)

    def literals(self, root: Path) -> frozenset[str]:
        return library_literals(root)

    def body_tokens(
        self, source: bytes, target: Target, stubbed: bytes | None = None
    ) -> tuple[Token, ...] | None:
        if target.kind == "module":
            return module_tokens(source, target, stubbed)
        if stubbed is None:
            return original_tokens(source, target)
        return candidate_tokens(source, stubbed, target)


def discover_python(root: Path) -> Extraction:
    """Targets of every importable library file under `root` (a checked-out source tree)."""
    if not root.is_dir():
        raise ReplicateError(f"not a directory: {root}")
    source_roots = find_source_roots(root)
    installed = installed_root_modules(root) if "." in source_roots else None
    outcomes = (
        extract_file(module_file)
        if installed is None or not _root_script(module_file, installed)
        else SkippedFile(path=module_file.rel_path, reason=NOT_INSTALLED)
        for source_root in source_roots
        for module_file in iter_module_files(root, source_root)
    )
    return Extraction.of(outcomes, source_roots)


NOT_INSTALLED = "a root-level module the distribution does not install (a script)"


def _root_script(module_file: ModuleFile, installed: frozenset[str]) -> bool:
    """A root-level module its setuptools configuration does not install
    (`languages/python_installed.py`)."""
    return "/" not in module_file.rel_path and module_file.module not in installed


def extract_file(module_file: ModuleFile) -> list[Target] | SkippedFile:
    """The targets of one file (its functions and methods, then its classes, then the file as a
    module), or why it was skipped (unreadable, generated, does not parse)."""
    try:
        data = module_file.path.read_bytes()
    except OSError as exc:
        return SkippedFile(path=module_file.rel_path, reason=f"unreadable: {exc.strerror}")
    reason = file_problem(data, module_file.rel_path)
    if reason is not None:
        return SkippedFile(path=module_file.rel_path, reason=reason)
    tree = parse_tree(data)
    error_line = first_error_line(tree)
    if error_line is not None:
        return SkippedFile(
            path=module_file.rel_path, reason=f"does not parse (tree-sitter): line {error_line}"
        )
    path, module = module_file.rel_path, module_file.module
    targets = extract_targets(data, tree, path, module)
    classes = extract_classes(data, tree, path, module)
    whole = file_module(data, path, module, targets, classes)
    return targets + classes + ([whole] if whole is not None else [])


def file_problem(data: bytes, rel_path: str) -> str | None:
    """Why a file cannot give targets: too large, generated, not UTF-8, not Python 3.11."""
    if len(data) > MAX_FILE_BYTES:
        return f"too large ({len(data)} bytes)"
    reason = generated_reason(data) or encoding_problem(data)
    if reason is not None:
        return reason
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, rel_path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"does not parse: {syntax_problem(exc)}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"does not parse: {type(exc).__name__}"
    return None
