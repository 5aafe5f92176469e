"""Stubbing a target's body and splicing a candidate back in: the ONE rule of docs/design.md §1.

Pure: no I/O, subprocess or environment. Uses only the standard library (`ast`, `tokenize`) so the
exported, stdlib-only reward functions can share it.

`splice(stubbed, candidate, target)`:
1. find the code (`python_answer.extract_code`: the text as it stands when it is Python, else
   the answer's fenced block that defines the target, chat markers and thinking taken off);
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
import warnings

from replicate.core import Span, SpliceError, Target
from replicate.languages.python_answer import Code, extract_code
from replicate.languages.python_splice_text import (
    dedent_code,
    edited_region,
    leading_space,
    reindent,
    strip_fences,
)
from replicate.languages.python_splice_tree import (
    FunctionNode,
    Stubbed,
    bound_names,
    end_line,
    find_candidate_def,
    first_line,
    parse_text,
    stubbed_facts,
)

STUB_BODY = b"raise NotImplementedError"


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
    "stub_spans",
]


def stub_spans(target: Target) -> tuple[Span, ...]:
    """What the stub replaces, in source order: the target's body span, or for a class each
    member's."""
    return tuple(part.body_span for part in target.members or (target,))


def stub_source(source: bytes, target: Target) -> bytes:
    """`source` with exactly the bytes of the target's body span replaced by the stub; for a
    class, each member's body span (the last first, so the earlier spans stay where they are)."""
    for span in reversed(stub_spans(target)):
        if not 0 <= span.start_byte <= span.end_byte <= len(source):
            raise ValueError(f"body span {span.start_byte}..{span.end_byte} outside the source")
        source = source[: span.start_byte] + STUB_BODY + source[span.end_byte :]
    return source


def _normalised(candidate_text: str) -> str:
    return candidate_text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")


def splice(stubbed: bytes, candidate_text: str, target: Target, *, check: bool = True) -> bytes:
    """The target file after putting `candidate_text` into the stubbed file (docs/design.md §1);
    with `check`, refused unless it compiles."""
    text = _normalised(candidate_text)
    file_text = stubbed.decode("utf-8")
    bom = file_text.startswith("\ufeff")
    file_text = file_text.removeprefix("\ufeff")
    facts = stubbed_facts(stubbed, file_text, target)
    if _edited_in_place(text, file_text, facts, target):
        result = text  # the whole file, as the parse below would find it
    else:
        candidate = extract_code(text, target)
        if _whole_file(facts.names, candidate.tree, target):
            result = candidate.text
        else:
            result = _complete(file_text, facts, candidate, target)
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
        tree = parse_text(definition, "definition")
    except SpliceError:
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if not isinstance(node, FunctionNode) or node.name != target.name or target.members:
        return None
    if target.decorators and not node.decorator_list:
        return None  # `splice` would keep the original's decorators
    lines = source.decode("utf-8").split("\n")
    first, last = target.def_span.start_line, target.def_span.end_line
    indent = leading_space(lines[first - 1])
    block = reindent(definition, first_line(node), end_line(node), indent)
    block += [""] * (last - first + 1 - len(block))
    return "\n".join(lines[: first - 1] + block + lines[last:]).encode("utf-8")


def _edited_in_place(text: str, file_text: str, facts: Stubbed, target: Target) -> bool:
    """Whether the candidate is the stubbed file with only the target's definition edited (an
    agent's edit of its workspace), so that it is a whole file without parsing it: a large
    file's parse is most of a grade's own time.  Only where the file binds a name besides the
    target's (else the whole-file rule looks at what the candidate adds) and the edited lines
    parse alone (`edited_region` says why the file then binds what the stubbed file binds)."""
    if facts.old_def is None or not _others(facts.names, target):
        return False
    _, first, last = facts.old_def
    region = edited_region(text, file_text, first, last)
    if region is None:
        return False
    try:
        parse_text(region, "candidate")
    except SpliceError:
        return False
    return True


def is_whole_file(file_tree: ast.Module, candidate_tree: ast.Module, target: Target) -> bool:
    """Whether the candidate defines every top-level name of the file other than the target's.

    When the file binds no other name the test is vacuous: the candidate is then a whole file
    only if it binds names beyond the target and its imports (helpers, constants); a bare def
    with imports stays a completion, so the file keeps its docstring and `__future__` imports.
    """
    return _whole_file(frozenset(bound_names(file_tree.body)), candidate_tree, target)


def _whole_file(file_names: frozenset[str], candidate_tree: ast.Module, target: Target) -> bool:
    """`is_whole_file`, given the file's top-level names."""
    own = target.qualname.split(".", 1)[0]
    others = _others(file_names, target)
    names = set(bound_names(candidate_tree.body))
    if others:
        return others <= names
    imports: list[ast.stmt] = [
        node for node in candidate_tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    return bool(names - {own} - set(bound_names(imports)))


def _others(file_names: frozenset[str], target: Target) -> frozenset[str]:
    """The file's top-level names but the one the target's definition binds."""
    return file_names - {target.qualname.split(".", 1)[0]}


def _check_compiles(text: str, path: str) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise SpliceError(f"spliced file does not compile: line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise SpliceError(f"spliced file does not compile: {type(exc).__name__}") from None


def _complete(file_text: str, facts: Stubbed, candidate: Code, target: Target) -> str:
    """Splice a completion: the candidate's def replaces the stub, its imports go to the top."""
    new_def = find_candidate_def(candidate.tree, target)
    if new_def is None:
        raise SpliceError(f"no definition of {target.name}")
    if facts.old_def is None:
        raise SpliceError(f"stubbed file has no definition of {target.qualname}")
    def_line, old_first, old_end = facts.old_def
    crlf = "\r\n" in file_text and file_text.count("\r\n") == file_text.count("\n")
    lines = (file_text.replace("\r\n", "\n") if crlf else file_text).split("\n")
    keep_old_decorators = not new_def.decorator_list
    old_start = def_line if keep_old_decorators else old_first
    indent = leading_space(lines[old_start - 1])
    block = reindent(candidate.text, first_line(new_def), end_line(new_def), indent)
    lines[old_start - 1 : old_end] = block
    imports = _new_imports(candidate, facts)
    anchor = _import_anchor(facts.header_end, lines)
    lines[anchor:anchor] = imports
    text = "\n".join(lines)
    return text.replace("\n", "\r\n") if crlf else text


def _new_imports(candidate: Code, facts: Stubbed) -> list[str]:
    """Lines of the candidate's top-level imports the file lacks, `__future__` ones first."""
    existing, features = facts.imports, facts.features
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


def _import_anchor(header_end: int, lines: list[str]) -> int:
    """0-based line index where new imports go: after the docstring and `__future__` imports
    (`header_end`, their last line).  In a file with neither, after its leading comment lines
    (shebang, coding cookie, licence)."""
    end = header_end
    if end == 0:
        while end < len(lines) and lines[end].lstrip().startswith("#"):
            end += 1
    return end
