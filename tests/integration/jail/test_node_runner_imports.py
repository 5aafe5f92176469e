"""The Node runner loads Node's built-ins and its own files only: read from its source with
tree-sitter, and seen in the jail (what `require.cache` holds when the target runs)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from replicate.jail import wire
from replicate.jail.node import RUNNER_DIR, NodeCall, NodeTarget, Status, node_binary, run_node
from replicate.languages.javascript_extract import parse_source
from replicate.sandbox import get_sandbox
from replicate.values import javascript as js


def builtins() -> frozenset[str]:
    # with the built-ins only the `node:` scheme names (`node:test`), which the list leaves out
    script = (
        "const m = require('node:module'); console.log(JSON.stringify(["
        "...m.builtinModules, ...['test', 'sea', 'sqlite'].filter((n) => m.isBuiltin('node:' + n))"
        "]))"
    )
    done = subprocess.run(
        [str(node_binary()), "-e", script], capture_output=True, text=True, check=True
    )
    return frozenset(json.loads(done.stdout))


def enclosing(node: Any) -> str | None:
    """The name of the function declaration `node` is in."""
    while node is not None:
        if node.type == "function_declaration":
            name = node.child_by_field_name("name")
            return (name.text or b"").decode() if name is not None else None
        node = node.parent
    return None


def loads(source: bytes, name: str) -> list[tuple[str, str | None]]:
    """Every `require(...)` and `import(...)` of a script: (kind, the literal string or, for
    one that is not a literal, None, or `load` in the function of that name)."""
    tree = parse_source(source, name)
    found: list[tuple[str, str | None]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type == "import_statement" or (
            node.type == "export_statement" and node.child_by_field_name("source") is not None
        ):
            source_node = node.child_by_field_name("source")
            text = (source_node.text or b"")[1:-1].decode() if source_node else None
            found.append(("import", text))
        if node.type != "call_expression":
            continue
        callee = node.child_by_field_name("function")
        if callee is None or callee.type not in ("import", "identifier"):
            continue
        if callee.type == "identifier" and callee.text != b"require":
            continue
        arguments = node.child_by_field_name("arguments")
        first = arguments.named_children[0] if arguments and arguments.named_children else None
        literal = None
        if first is not None and first.type == "string":
            literal = (first.text or b"")[1:-1].decode()
        elif enclosing(node) in ("load", "loadTool", "loadInstalled"):
            literal = enclosing(node)
        found.append((callee.type.replace("identifier", "require"), literal))
    return found


def outside(source: bytes, name: str, known: frozenset[str], own: frozenset[str]) -> list[str]:
    """What a runner file loads beyond Node's built-ins (by `node:` name) and its own files,
    apart from the target's module, which only the function `load` loads."""
    bad = []
    for kind, literal in loads(source, name):
        builtin = literal is not None and literal.startswith("node:") and literal[5:] in known
        if not (literal == "load" or (kind == "require" and (builtin or literal in own))):
            bad.append(f"{kind}({literal})")
    return bad


PARTS = sorted([*RUNNER_DIR.glob("*.cjs"), *RUNNER_DIR.glob("*.mjs")])
# The files that load one pinned npm tool (`jail/node_tools.py`), and only in their function
# `loadTool`, from the folder the host names: the TypeScript loader and its hook (preloaded only
# for a TypeScript job) and the widening script (run on its own, never by the runner).
TOOLS = frozenset({"typescript.cjs", "typescript.mjs", "widen.cjs"})
# The jest, vitest and ava shims, preloaded by the harvest for such a repository's test files (never
# by the runner): two load packages their runner ships from the repository's installed
# dependencies, and only in their function `loadInstalled`; vitest's module may import the
# built-ins and its own files.
SHIMS = frozenset(
    {"jest_globals.cjs", "test_api.cjs", "vitest_globals.cjs", "shim_hook.mjs", "vitest.mjs"}
    | {"ava_globals.cjs", "ava.cjs"}
)
INSTALLED = frozenset({"jest_globals.cjs", "vitest.mjs"})
# scope.mjs is a hook, not a module; record.cjs the harvest's recorder, which the runner never loads
SCRIPTS = [
    p
    for p in PARTS
    if p.suffix == ".cjs" and p.name != "record.cjs" and p.name not in TOOLS | SHIMS
]


def test_the_check_sees_a_package_a_dynamic_require_and_an_import() -> None:
    source = b"const a = require('lodash'); const b = require(name); import('x');"
    found = outside(source, "x.cjs", builtins(), frozenset())
    assert found == ["import(x)", "require(None)", "require(lodash)"]
    module = b"import a from 'lodash'; export { b } from 'node:fs'; export const c = 1;"
    assert outside(module, "x.mjs", builtins(), frozenset()) == [
        "import(node:fs)",
        "import(lodash)",
    ]
    assert outside(b"require('node:fs'); require('fs')", "x.cjs", builtins(), frozenset()) == [
        "require(fs)"
    ]
    in_load = b"function load(f) { return require(f); } function other(f) { return import(f); }"
    assert outside(in_load, "x.cjs", builtins(), frozenset()) == ["import(None)"]


@pytest.mark.parametrize("part", PARTS, ids=[p.name for p in PARTS])
def test_each_runner_file_loads_node_builtins_only(part: Path) -> None:
    own = frozenset(f"./{p.name}" for p in PARTS)
    source = part.read_bytes()
    if part.suffix == ".cjs":
        assert loads(source, part.name), "no loads found: the check would prove nothing"
    found = outside(source, part.name, builtins(), own)
    if part.name in TOOLS:  # a builtin imported, and the tool in `loadTool`
        known = builtins()
        allowed = {f"import(node:{name})" for name in known} | {"require(loadTool)"}
        assert "require(loadTool)" in found or part.suffix == ".mjs"
        found = [item for item in found if item not in allowed]
    if part.name in INSTALLED:
        loaded = {"require(loadInstalled)", "import(loadInstalled)"}
        assert loaded & set(found)
        found = [item for item in found if item not in loaded]
    if part.name in SHIMS and part.suffix == ".mjs":
        known = builtins()
        allowed = {f"import(node:{name})" for name in known}
        found = [item for item in found if item not in allowed]
    assert found == []


def test_in_the_jail_only_the_runner_and_the_target_are_loaded(tmp_path: Path) -> None:
    (tmp_path / "probe.js").write_text(
        "module.exports = () => Object.keys(require.cache).sort();\n"
    )
    run = run_node(get_sandbox("local"), tmp_path, NodeTarget("probe.js", ()), [NodeCall(())])
    (outcome,) = run.outcomes
    assert outcome.status is Status.RETURNED
    expected = sorted([*(str(p) for p in SCRIPTS), str(tmp_path.resolve() / "probe.js")])
    assert outcome.value == js.Array(tuple(expected))


def test_the_runner_writes_the_python_wire_events_and_statuses() -> None:
    """The host reads the Node runner's channel with the Python runner's frame reader: every
    event and status it writes is one of `wire`'s."""
    source = (RUNNER_DIR / "main.cjs").read_text()
    events = set(re.findall(r"event: '([a-z_]+)'", source))
    statuses = set(re.findall(r"status: '([a-z_]+)'", source))
    assert events == {
        wire.STARTED,
        wire.IMPORT_ERROR,
        wire.READY,
        wire.LOADED,
        wire.CALL,
        wire.RESULT,
        wire.DONE,
    }
    assert statuses and statuses <= wire.STATUSES


def test_both_sides_know_the_same_tags() -> None:
    """Every tag the runner writes is one the trusted side reads, and every tag the trusted
    side reads is one the runner writes."""
    written = set()
    for part in SCRIPTS:
        written |= set(re.findall(r"\bt: '([a-z_]+)'", part.read_text()))
    assert written == js.TAGS
