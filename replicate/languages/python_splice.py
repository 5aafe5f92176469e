"""Stubbing a target's body and splicing a candidate back in: the ONE rule of docs/design.md §1.

Pure: no I/O, subprocess or environment. Uses only the standard library (`ast`, `tokenize`) so the
exported, stdlib-only reward functions can share it.

`splice(stubbed, candidate, target)`:
1. strip markdown fences (only when the text is not Python as it stands);
2. whole file: the candidate defines every top-level name of the stubbed file other than the
   target's -> it is the file (see `is_whole_file` for a file that has no other name);
3. completion: its definition of the target (a method: inside `class <Name>:` or a bare `def` at
   any indentation) replaces the stubbed definition, re-indented to the target's place; when the
   candidate's def has no decorators the stubbed def keeps its own. The candidate's top-level
   imports go to the top of the file (after the module docstring and `__future__` imports).
The result must compile, else `SpliceError`.
"""

from __future__ import annotations

import ast
import functools
import warnings
from dataclasses import dataclass

from replicate.core import PARSE_LOCK, SpliceError, Target
from replicate.languages.python_splice_text import (
    dedent_code,
    leading_space,
    reindent,
    strip_fences,
)

STUB_BODY = b"raise NotImplementedError"
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


__all__ = [
    "STUB_BODY",
    "SpliceError",
    "dedent_code",
    "find_candidate_def",
    "is_whole_file",
    "replace_definition",
    "splice",
    "strip_fences",
    "stub_source",
]


def stub_source(source: bytes, target: Target) -> bytes:
    """`source` with exactly the bytes of the target's body span replaced by the stub."""
    span = target.body_span
    if not 0 <= span.start_byte <= span.end_byte <= len(source):
        raise ValueError(f"body span {span.start_byte}..{span.end_byte} outside the source")
    return source[: span.start_byte] + STUB_BODY + source[span.end_byte :]


def _bound_names(statements: list[ast.stmt]) -> list[str]:
    names: list[str] = []
    for node in statements:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Import):
            names.extend(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            names.extend(alias.asname or alias.name for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names.extend(_target_names(target))
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            if not (isinstance(node, ast.AnnAssign) and node.value is None):
                names.extend(_target_names(node.target))
        elif isinstance(node, ast.If | ast.With | ast.AsyncWith):
            names.extend(_bound_names(node.body + getattr(node, "orelse", [])))
        elif isinstance(node, ast.Try | ast.TryStar):
            handlers = [stmt for handler in node.handlers for stmt in handler.body]
            names.extend(_bound_names(node.body + handlers + node.orelse + node.finalbody))
    return names


def _target_names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List):
        return [name for element in node.elts for name in _target_names(element)]
    if isinstance(node, ast.Starred):
        return _target_names(node.value)
    return []


def _parse(source: str, what: str) -> ast.Module:
    try:
        with PARSE_LOCK, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except SyntaxError as exc:
        raise SpliceError(f"{what} does not parse: line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SpliceError(f"{what} does not parse: {type(exc).__name__}") from None


@functools.lru_cache(maxsize=32)
def _parse_stubbed(text: str) -> ast.Module:
    """The stubbed file's tree; cached, as one stubbed file takes many candidates (read only)."""
    return _parse(text, "stubbed file")


@dataclass(frozen=True)
class _Candidate:
    text: str
    tree: ast.Module


def _read_candidate(candidate_text: str) -> _Candidate:
    """Normalised newlines, fences stripped unless it is Python as it stands, dedented if needed."""
    text = candidate_text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
    try:
        return _Candidate(text, _parse(text, "candidate"))
    except SpliceError:
        text = strip_fences(text)
    try:
        return _Candidate(text, _parse(text, "candidate"))
    except SpliceError as first_error:
        dedented = dedent_code(text)
        if dedented == text:
            raise
        try:
            return _Candidate(dedented, _parse(dedented, "candidate"))
        except SpliceError:
            raise first_error from None


def splice(stubbed: bytes, candidate_text: str, target: Target, *, check: bool = True) -> bytes:
    """The target file after putting `candidate_text` into the stubbed file (docs/design.md §1);
    with `check`, refused unless it compiles."""
    candidate = _read_candidate(candidate_text)
    file_text = stubbed.decode("utf-8")
    bom = file_text.startswith("\ufeff")
    file_text = file_text.removeprefix("\ufeff")
    file_tree = _parse_stubbed(file_text)
    if is_whole_file(file_tree, candidate.tree, target):
        result = candidate.text
    else:
        result = _complete(file_text, file_tree, candidate, target)
    if check:
        _check_compiles(result, target.path)
    return (("\ufeff" if bom else "") + result).encode("utf-8")


def replace_definition(source: bytes, definition: str, target: Target) -> bytes | None:
    """`source`, the target's original file, with the target's whole definition replaced by
    `definition` (one bare def of the target, as gen's mutants are) and blank lines after it up
    to the original's line count: what `splice` puts into the stubbed file for it, padded as
    `replicate.gen.lines` pads, without parsing the file (a large file's parse was a tenth of a
    gen's own time).  None where that cannot be told so (a CRLF or BOM file, a definition that
    is not one def of the target, or one without the decorators the original has)."""
    if b"\r" in source or source.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        tree = _parse(definition, "definition")
    except SpliceError:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, _FunctionNode) or node.name != target.name:
        return None
    if target.decorators and not node.decorator_list:
        return None  # `splice` would keep the original's decorators
    lines = source.decode("utf-8").split("\n")
    first, last = target.def_span.start_line, target.def_span.end_line
    indent = leading_space(lines[first - 1])
    block = reindent(definition, _first_line(node), _end_line(node), indent)
    block += [""] * (last - first + 1 - len(block))
    return "\n".join(lines[: first - 1] + block + lines[last:]).encode("utf-8")


def is_whole_file(file_tree: ast.Module, candidate_tree: ast.Module, target: Target) -> bool:
    """Whether the candidate defines every top-level name of the file other than the target's.

    When the file binds no other name the test is vacuous: the candidate is then a whole file
    only if it binds names beyond the target and its imports (helpers, constants); a bare def
    with imports stays a completion, so the file keeps its docstring and `__future__` imports.
    """
    own = target.qualname.split(".", 1)[0]
    others = set(_bound_names(file_tree.body)) - {own}
    names = set(_bound_names(candidate_tree.body))
    if others:
        return others <= names
    imports: list[ast.stmt] = [
        node for node in candidate_tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return bool(names - {own} - set(_bound_names(imports)))


def _check_compiles(text: str, path: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise SpliceError(f"spliced file does not compile: line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SpliceError(f"spliced file does not compile: {type(exc).__name__}") from None


def _complete(file_text: str, file_tree: ast.Module, candidate: _Candidate, target: Target) -> str:
    """Splice a completion: the candidate's def replaces the stub, its imports go to the top."""
    new_def = find_candidate_def(candidate.tree, target)
    if new_def is None:
        raise SpliceError(f"no definition of {target.name}")
    old_def = _find_stubbed_def(file_tree, target)
    if old_def is None:
        raise SpliceError(f"stubbed file has no definition of {target.qualname}")
    crlf = "\r\n" in file_text and file_text.count("\r\n") == file_text.count("\n")
    lines = (file_text.replace("\r\n", "\n") if crlf else file_text).split("\n")
    keep_old_decorators = not new_def.decorator_list
    old_start = old_def.lineno if keep_old_decorators else _first_line(old_def)
    indent = leading_space(lines[old_start - 1])
    block = reindent(candidate.text, _first_line(new_def), _end_line(new_def), indent)
    lines[old_start - 1 : _end_line(old_def)] = block
    imports = _new_imports(candidate, file_tree)
    anchor = _import_anchor(file_tree, lines)
    lines[anchor:anchor] = imports
    text = "\n".join(lines)
    return text.replace("\n", "\r\n") if crlf else text


def _first_line(node: _FunctionNode) -> int:
    return min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])


def _end_line(node: ast.stmt) -> int:
    return node.end_lineno if node.end_lineno is not None else node.lineno


def find_candidate_def(tree: ast.Module, target: Target) -> _FunctionNode | None:
    """The candidate's definition of the target, or None.

    A method: the def inside `class <Name>:` (the class chain, or any tail of it), else a bare
    top-level def, else a def of that name at any depth. A function: a module-level def (the last
    one, as Python would keep it).
    """
    name = target.name
    module_level = _flatten(tree.body)
    if target.class_name:
        chain = target.class_name.split(".")
        for start in range(len(chain)):
            found = _def_in_classes(module_level, chain[start:], name)
            if found is not None:
                return found
    found = _last_def(module_level, name)
    if found is not None or not target.class_name:
        return found
    return next(
        (node for node in ast.walk(tree) if isinstance(node, _FunctionNode) and node.name == name),
        None,
    )


def _flatten(statements: list[ast.stmt]) -> list[ast.stmt]:
    """Statements of a block, with those of nested if/try/with blocks in their place."""
    flat: list[ast.stmt] = []
    for node in statements:
        flat.append(node)
        if isinstance(node, ast.If | ast.With | ast.AsyncWith):
            flat.extend(_flatten(node.body + getattr(node, "orelse", [])))
        elif isinstance(node, ast.Try | ast.TryStar):
            handlers = [stmt for handler in node.handlers for stmt in handler.body]
            flat.extend(_flatten(node.body + handlers + node.orelse + node.finalbody))
    return flat


def _last_def(statements: list[ast.stmt], name: str) -> _FunctionNode | None:
    found = [node for node in statements if isinstance(node, _FunctionNode) and node.name == name]
    return found[-1] if found else None


def _def_in_classes(
    statements: list[ast.stmt], chain: list[str], name: str
) -> _FunctionNode | None:
    classes = [node for node in statements if isinstance(node, ast.ClassDef)]
    for node in reversed(classes):
        if node.name != chain[0]:
            continue
        body = _flatten(node.body)
        found = _last_def(body, name) if len(chain) == 1 else _def_in_classes(body, chain[1:], name)
        if found is not None:
            return found
    return None


def _find_stubbed_def(tree: ast.Module, target: Target) -> _FunctionNode | None:
    """The target's def in the stubbed file: where it starts (as in the original), else by name."""
    for node in ast.walk(tree):
        if (
            isinstance(node, _FunctionNode)
            and node.name == target.name
            and _first_line(node) == target.def_span.start_line
        ):
            return node
    module_level = _flatten(tree.body)
    if target.class_name:
        return _def_in_classes(module_level, target.class_name.split("."), target.name)
    return _last_def(module_level, target.name)


def _new_imports(candidate: _Candidate, file_tree: ast.Module) -> list[str]:
    """Lines of the candidate's top-level imports the file lacks, `__future__` ones first."""
    existing = {
        ast.dump(node) for node in file_tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    }
    features = {
        alias.name
        for node in file_tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "__future__"
        for alias in node.names
    }
    futures: list[str] = []
    others: list[str] = []
    for node in candidate.tree.body:
        if not isinstance(node, ast.Import | ast.ImportFrom) or ast.dump(node) in existing:
            continue
        segment = ast.get_source_segment(candidate.text, node) or ""
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            if not {alias.name for alias in node.names} <= features:
                futures.append(segment)
        elif segment not in others:
            others.append(segment)
    return [line for segment in futures + others for line in segment.split("\n")]


def _is_str_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _import_anchor(tree: ast.Module, lines: list[str]) -> int:
    """0-based line index where new imports go: after the docstring and `__future__` imports.

    In a file with neither, after its leading comment lines (shebang, coding cookie, licence).
    """
    body = tree.body
    end = 0
    index = 0
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and _is_str_constant(first.value):
        end, index = _end_line(first), 1
    while (
        index < len(body)
        and isinstance(body[index], ast.ImportFrom)
        and getattr(body[index], "module", None) == "__future__"
    ):
        end, index = _end_line(body[index]), index + 1
    if end == 0:
        while end < len(lines) and lines[end].lstrip().startswith("#"):
            end += 1
    return end
