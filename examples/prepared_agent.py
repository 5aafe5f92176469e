#!/usr/bin/env python3
"""An example agent for `replicate run` that applies prepared attempts (docs/design.md §1, agent
protocol).

It runs with the task's workspace as its working directory and reads the protocol's variables:
REPLICATE_TASK_ID, REPLICATE_WORKSPACE, REPLICATE_PROMPT, REPLICATE_TARGET_FILE (workspace-relative)
and REPLICATE_TARGET (the dotted symbol, `pkg.mod.func` or `pkg.mod.Class.method`).

For the target it looks for `attempts/<symbol>.py` next to this script: a file holding a single
function definition (for a method, a bare `def name(self, ...)`).  It finds the target's definition
in the target file with `ast` and replaces it with the attempt, re-indented to the target's place.
If the attempt carries decorators they replace the target's; otherwise the target's decorators
(`@classmethod`, `@staticmethod`, ...) are kept.  No attempt for the target: exit 0 and change
nothing (the stub stays and scores 0).  Malformed input: a one-line message and exit 2.

Standard library only: it runs under the repository's environment interpreter inside the sandbox.
Set EXAMPLE_AGENT_LOG to a file path to get one JSON line per run appended there.
"""

from __future__ import annotations

import ast
import io
import json
import os
import sys
import tokenize
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

EXIT_BAD_INPUT = 2
REQUIRED_VARS = (
    "REPLICATE_TASK_ID",
    "REPLICATE_WORKSPACE",
    "REPLICATE_PROMPT",
    "REPLICATE_TARGET_FILE",
    "REPLICATE_TARGET",
)
FuncDef = ast.FunctionDef | ast.AsyncFunctionDef


class AgentInputError(Exception):
    """Malformed environment, target file or attempt: reported in one line, exit 2."""


@dataclass(frozen=True)
class AgentEnv:
    """The protocol variables, validated."""

    task_id: str
    workspace: Path
    prompt: Path
    target_file: Path
    target_rel: str
    symbol: str


@dataclass(frozen=True)
class Attempt:
    """A prepared definition: its source lines (decorators included) and whether it has any."""

    path: Path
    name: str
    lines: tuple[str, ...]
    has_decorators: bool


def read_env(environ: Mapping[str, str]) -> AgentEnv:
    """Validate the protocol variables; the target file must be a .py file inside the workspace."""
    missing = [name for name in REQUIRED_VARS if not environ.get(name)]
    if missing:
        raise AgentInputError(f"missing environment variable(s): {', '.join(missing)}")
    workspace = Path(environ["REPLICATE_WORKSPACE"])
    if not workspace.is_absolute() or not workspace.is_dir():
        raise AgentInputError(f"REPLICATE_WORKSPACE is not an absolute directory: {workspace}")
    target_rel = environ["REPLICATE_TARGET_FILE"]
    if Path(target_rel).is_absolute() or not target_rel.endswith(".py"):
        raise AgentInputError(f"REPLICATE_TARGET_FILE must be a relative .py path: {target_rel}")
    target_file = (workspace / target_rel).resolve()
    if not target_file.is_relative_to(workspace.resolve()) or not target_file.is_file():
        raise AgentInputError(f"target file not found inside the workspace: {target_rel}")
    symbol = environ["REPLICATE_TARGET"]
    parts = symbol.split(".")
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        raise AgentInputError(f"REPLICATE_TARGET is not a dotted symbol: {symbol!r}")
    return AgentEnv(
        task_id=environ["REPLICATE_TASK_ID"],
        workspace=workspace,
        prompt=Path(environ["REPLICATE_PROMPT"]),
        target_file=target_file,
        target_rel=target_rel,
        symbol=symbol,
    )


def split_lines(text: str) -> list[str]:
    """Split like the parser counts lines (\\n, \\r\\n, \\r), keeping the line endings."""
    return io.StringIO(text, newline="").readlines()


def read_source(path: Path) -> tuple[str, str]:
    """Decode a Python source file by its encoding cookie (UTF-8 by default)."""
    raw = path.read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return raw.decode(encoding), encoding
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise AgentInputError(f"{path} cannot be decoded: {exc}") from None


def parse(text: str, path: Path) -> ast.Module:
    try:
        return ast.parse(text, filename=str(path))
    except SyntaxError as exc:
        raise AgentInputError(f"{path} does not parse: {exc.msg} (line {exc.lineno})") from None


def first_line(node: FuncDef) -> int:
    """1-based line of the first decorator, or of the `def` when there is none."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def load_attempt(path: Path) -> Attempt:
    """Read an attempt file: exactly one top-level function definition, comments allowed."""
    text, _ = read_source(path)
    tree = parse(text, path)
    if len(tree.body) != 1 or not isinstance(tree.body[0], FuncDef):
        raise AgentInputError(f"{path} must hold exactly one function definition")
    node = tree.body[0]
    assert node.end_lineno is not None
    lines = split_lines(text)[first_line(node) - 1 : node.end_lineno]
    body = dedent_code(lines, lines[0][: len(lines[0]) - len(lines[0].lstrip())])
    return Attempt(path, node.name, tuple(body), bool(node.decorator_list))


def string_continuation_lines(lines: Sequence[str]) -> set[int]:
    """0-based indexes of lines that begin inside a multi-line token (a string's interior)."""
    protected: set[int] = set()
    readline = iter(lines).__next__
    try:
        for tok in tokenize.generate_tokens(readline):
            protected.update(range(tok.start[0], tok.end[0]))
    except (tokenize.TokenError, SyntaxError, StopIteration):
        pass
    return protected


def dedent_code(lines: Sequence[str], margin: str) -> list[str]:
    """Strip `margin` from code lines, leaving the insides of multi-line strings untouched."""
    protected = string_continuation_lines(lines)
    out = []
    for index, line in enumerate(lines):
        if index in protected:
            out.append(line)
        elif line.startswith(margin):
            out.append(line[len(margin) :])
        else:
            out.append(line.lstrip(" \t"))
    return out


def indent_code(lines: Sequence[str], indent: str, newline: str) -> list[str]:
    """Prefix code lines with `indent` (not blank lines, not string interiors); unify newlines."""
    protected = string_continuation_lines(lines)
    out = []
    for index, line in enumerate(lines):
        content = line.rstrip("\r\n")
        if index in protected or not content.strip():
            out.append(content + newline)
        else:
            out.append(indent + content + newline)
    return out


def iter_statements(body: Sequence[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a block, looking through `if`/`try` blocks at the same nesting level."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If):
            yield from iter_statements(stmt.body)
            yield from iter_statements(stmt.orelse)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                yield from iter_statements(block)
            for handler in stmt.handlers:
                yield from iter_statements(handler.body)


def find_definition(tree: ast.Module, qualname: Sequence[str]) -> FuncDef | None:
    """The function or method named by `qualname` (class names, then the function's name).

    When a name is bound more than once, the last definition wins, as it does at run time.
    """
    body: Sequence[ast.stmt] = tree.body
    for class_name in qualname[:-1]:
        classes = [s for s in iter_statements(body) if isinstance(s, ast.ClassDef)]
        matching = [c for c in classes if c.name == class_name]
        if not matching:
            return None
        body = matching[-1].body
    funcs = [s for s in iter_statements(body) if isinstance(s, FuncDef)]
    matching_funcs = [f for f in funcs if f.name == qualname[-1]]
    return matching_funcs[-1] if matching_funcs else None


def module_stem(target_rel: str) -> str:
    path = Path(target_rel)
    return path.parent.name if path.stem == "__init__" else path.stem


def locate_target(tree: ast.Module, symbol: str, target_rel: str) -> FuncDef:
    """Split `symbol` into module and qualified name and find the definition.

    The split whose module part ends with the target file's module name is tried first; then
    every other split, shortest qualified name first.
    """
    parts = symbol.split(".")
    splits = list(range(len(parts) - 1, 0, -1))
    stem = module_stem(target_rel)
    splits.sort(key=lambda i: parts[i - 1] != stem)
    for i in splits:
        node = find_definition(tree, parts[i:])
        if node is not None:
            return node
    raise AgentInputError(f"{symbol} is not defined in {target_rel}")


def splice(source: str, node: FuncDef, attempt: Attempt) -> str:
    """Replace `node`'s definition in `source` by the attempt, re-indented to its place."""
    lines = split_lines(source)
    def_line = lines[node.lineno - 1]
    indent = def_line[: len(def_line) - len(def_line.lstrip(" \t"))]
    newline = def_line[len(def_line.rstrip("\r\n")) :] or "\n"
    start = first_line(node) if attempt.has_decorators else node.lineno
    assert node.end_lineno is not None
    replacement = indent_code(attempt.lines, indent, newline)
    return "".join(lines[: start - 1] + replacement + lines[node.end_lineno :])


def apply_attempt(env: AgentEnv, attempts_dir: Path) -> str:
    """Apply the prepared attempt for the target, if any; return what was done.

    The target is located first, so a symbol missing from its file is an error either way.
    """
    source, encoding = read_source(env.target_file)
    node = locate_target(parse(source, env.target_file), env.symbol, env.target_rel)
    attempt_path = attempts_dir / f"{env.symbol}.py"
    if not attempt_path.is_file():
        return "no_attempt"
    attempt = load_attempt(attempt_path)
    if attempt.name != node.name:
        raise AgentInputError(f"{attempt_path.name} defines {attempt.name!r}, not {node.name!r}")
    new_source = splice(source, node, attempt)
    check = parse(new_source, env.target_file)
    if locate_target(check, env.symbol, env.target_rel).name != node.name:
        raise AgentInputError("the spliced file lost the target")
    env.target_file.write_bytes(new_source.encode(encoding))
    return "applied"


def write_log(environ: Mapping[str, str], record: Mapping[str, object]) -> None:
    """Append one JSON line to $EXAMPLE_AGENT_LOG when it is set; never fail the run over it."""
    log_path = environ.get("EXAMPLE_AGENT_LOG")
    if not log_path:
        return
    try:
        with open(log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(dict(record), sort_keys=True) + "\n")
    except OSError as exc:
        print(f"prepared_agent: warning: cannot write log {log_path}: {exc}", file=sys.stderr)


def main(environ: Mapping[str, str] | None = None, attempts_dir: Path | None = None) -> int:
    env_vars = os.environ if environ is None else environ
    directory = attempts_dir or Path(os.path.abspath(__file__)).parent / "attempts"
    try:
        env = read_env(env_vars)
        action = apply_attempt(env, directory)
    except (AgentInputError, OSError) as exc:
        print(f"prepared_agent: error: {exc}", file=sys.stderr)
        write_log(env_vars, {"action": "error", "message": str(exc)})
        return EXIT_BAD_INPUT
    print(f"prepared_agent: {action} for {env.symbol} in {env.target_rel}")
    write_log(
        env_vars,
        {"action": action, "task_id": env.task_id, "target": env.symbol, "file": env.target_rel},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
