"""Stubbing a JavaScript/TypeScript target's body and splicing a candidate back in.

`stub_source` replaces the target's body span (its `{ ... }` block, or a concise arrow's
expression) by `STUB_BODY`, byte-exact elsewhere; the file still parses.

`splice(stubbed, candidate, target)`:
1. the code is the candidate as it stands, or its largest fenced block (``` ... ```), with the
   line ends of the stubbed file (LF, or CRLF where most of its lines end so);
2. whole file: the candidate parses and binds every top-level name of the stubbed file other than
   the target's (there being at least one) -> it is the file;
3. definition: the candidate's definition of the target (the function, `const f = ...` or
   `f = ...`, the class holding the method, or the bare method): its function (parameters and
   body) replaces the stubbed one where both are of one kind (two declarations, two arrows, two
   methods), the target's `export`, binding and decorators kept; else only its body replaces the
   stub, and an expression body where a block is needed becomes `{ return expr; }`.
The result must parse with the file's grammar, else `SpliceError` with a one-line reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node

from replicate.core import SpliceError, Target
from replicate.languages.javascript_extract import located_targets, parse_source, top_level_names
from replicate.languages.python_splice_text import strip_fences
from replicate.languages.syntax import first_error_line

STUB_BODY = b'{ throw new Error("not implemented"); }'
_METHOD_WRAPPER = ("class __Candidate__ {\n", "\n}\n")


def stub_source(source: bytes, target: Target) -> bytes:
    """`source` with exactly the bytes of the target's body span replaced by the stub."""
    span = target.body_span
    if not 0 <= span.start_byte <= span.end_byte <= len(source):
        raise ValueError(f"body span {span.start_byte}..{span.end_byte} outside the source")
    return source[: span.start_byte] + STUB_BODY + source[span.end_byte :]


def stub_bodies(source: bytes, target: Target, others: tuple[Target, ...]) -> bytes:
    """`source` with the bodies of `target` and `others` (same file) stubbed, last first."""
    result = source
    for each in sorted({target, *others}, key=lambda t: t.body_span.start_byte, reverse=True):
        result = stub_source(result, each)
    return result


def splice(stubbed: bytes, candidate_text: str, target: Target, *, check: bool = True) -> bytes:
    """The target file after putting `candidate_text` into the stubbed file."""
    start = target.body_span.start_byte
    if stubbed[start : start + len(STUB_BODY)] != STUB_BODY:
        raise SpliceError("the stubbed file does not hold the target's stub")
    code = _code(candidate_text, stubbed)
    if _is_whole_file(stubbed, code, target):
        result = code
    else:
        result = _put(stubbed, start + len(STUB_BODY), _candidate(code, target), target)
    if check:
        line = first_error_line(parse_source(result, target.path))
        if line is not None:
            raise SpliceError(f"the spliced file does not parse: line {line}")
    return result


def replace_definition(source: bytes, definition: str, target: Target) -> bytes | None:
    """`source` (the original file) with the target's definition taken from `definition` as
    `splice` takes it; None where the definition does not give one."""
    try:
        candidate = _candidate(_code(definition, source), target)
        return _put(source, target.body_span.end_byte, candidate, target)
    except SpliceError:
        return None


def _code(candidate_text: str, file: bytes) -> bytes:
    """The candidate's code, its line ends those of the file it goes into (LF or CRLF)."""
    text = candidate_text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
    code = (strip_fences(text) if "```" in text else text).encode("utf-8")
    crlf = file.count(b"\r\n") * 2 > file.count(b"\n")
    return code.replace(b"\n", b"\r\n") if crlf else code


def _is_whole_file(stubbed: bytes, code: bytes, target: Target) -> bool:
    tree = parse_source(code, target.path)
    if first_error_line(tree) is not None:
        return False
    own = target.class_name or target.name
    others = top_level_names(parse_source(stubbed, target.path)) - {own}
    return bool(others) and others <= top_level_names(tree)


@dataclass(frozen=True)
class _Candidate:
    code: bytes  # the reading of the candidate that defines the target
    target: Target  # its definition there
    function: Node


def _candidate(code: bytes, target: Target) -> _Candidate:
    """The candidate's definition of the target, read as it stands, then (a bare method) inside
    a class, then (`name = function ...`) after `const `; `SpliceError` when no reading parses
    and defines it."""
    readings = [code, b"const " + code]
    if target.class_name is not None:
        readings.insert(1, _METHOD_WRAPPER[0].encode() + code + _METHOD_WRAPPER[1].encode())
    first_error = first_error_line(parse_source(code, target.path))
    for reading in readings:
        tree = parse_source(reading, target.path)
        if first_error_line(tree) is not None:
            continue
        found = located_targets(reading, tree, target.path)
        exact = [pair for pair in found if pair[0].qualname == target.qualname]
        named = exact or [pair for pair in found if pair[0].name == target.name]
        if named:
            return _Candidate(reading, *named[0])
    if first_error is not None:
        raise SpliceError(f"the candidate does not parse: line {first_error}")
    raise SpliceError(f"the candidate does not define {target.qualname}")


def _put(file: bytes, end: int, candidate: _Candidate, target: Target) -> bytes:
    """`file` (stubbed or original, the target's body ending at `end`) with the candidate's
    function in place of the target's where both are of one kind (its parameters kept), else
    with the candidate's body. (`end` is not read from the tree: a comment after a block that
    ends a statement without `;` is inside it there.)"""
    start = target.body_span.start_byte
    for located, function in located_targets(file, parse_source(file, target.path), target.path):
        same = located.qualname == target.qualname and located.body_span.start_byte == start
        if same and function.type == candidate.function.type:
            text = candidate.code[
                candidate.function.start_byte : candidate.target.body_span.end_byte
            ]
            return file[: function.start_byte] + text + file[end:]
        if same:
            span = candidate.target.body_span
            body = candidate.code[span.start_byte : span.end_byte]
            return _place(file[:start], body, file[end:], target)
    raise SpliceError(f"the file does not hold {target.qualname} where the task says")


def _place(before: bytes, body: bytes, after: bytes, target: Target) -> bytes:
    """`body` between `before` and `after`; an expression body that does not parse there (the
    target needs a block) is put as `{ return body; }`."""
    result = before + body + after
    if body.startswith(b"{") or first_error_line(parse_source(result, target.path)) is None:
        return result
    return before + b"{ return " + body + b"; }" + after


__all__ = ["STUB_BODY", "replace_definition", "splice", "stub_bodies", "stub_source"]
