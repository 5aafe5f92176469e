"""TypeScript through the Node runner's transpile-only loader (sucrase, pinned): CommonJS and ES
module packages, .ts, .mts, .cts and .tsx, imports spelt as TypeScript spells them, an unexported
binding, a line of the source where a traceback puts it; the loader only where a TypeScript file
is run (positive control: without it the same target does not load); and a library's TypeScript
source, corpus/tslib's `src/version.ts` (our own ES module), its stub and a candidate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from replicate.jail import typescript
from replicate.jail.node import (
    CallKind,
    NodeCall,
    NodeOutcome,
    NodeTarget,
    Status,
    Thrown,
    run_node,
)
from replicate.jail.node_harvest import Harvest, record_tests, replay
from replicate.sandbox import Sandbox, get_sandbox
from replicate.values import javascript as js
from tests.integration.languages.conftest import TSLIB
from tests.integration.languages.test_npm_calls import NOT_IMPLEMENTED, rewritten, target_named

SHAPES = """\
import { helper, Kind } from './helper.js';
import type { Unused } from './types';

export interface Shape { w: number; kind?: Kind }

export function area(shape: Shape, scale: number = 2): number {
  return helper(shape.w) * scale;
}

function hidden<T>(items: readonly T[]): T[] {
  return [...items].reverse() as T[];
}

export const where = (): string => {
  return (new Error('here').stack as string).split('\\n')[1];
};
"""
HELPER = """\
export enum Kind { Square = 1, Circle }
export const helper = (n: number): number => n + Kind.Circle;
"""
TYPES = "export type Unused = { never: never };\n"


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return get_sandbox("local")


def package(root: Path, kind: str | None, files: dict[str, str]) -> Path:
    root.mkdir()
    meta = {"name": "p", "version": "1.0.0", **({"type": kind} if kind else {})}
    (root / "package.json").write_text(json.dumps(meta))
    for name, text in files.items():
        (root / name).write_text(text)
    return root


def returned(run_outcome: NodeOutcome) -> js.JsValue | None:
    assert run_outcome.status is Status.RETURNED, run_outcome
    return run_outcome.value


@pytest.mark.parametrize("kind", ["commonjs", "module"])
def test_a_typescript_package_of_either_module_kind(
    local: Sandbox, tmp_path: Path, kind: str
) -> None:
    tree = package(
        tmp_path / kind, kind, {"shapes.ts": SHAPES, "helper.ts": HELPER, "types.ts": TYPES}
    )
    shape = js.PlainObject(js.fields({"w": js.Num.of(3)}))
    run = run_node(local, tree, NodeTarget("shapes.ts", ("area",)), [NodeCall((shape,))])
    assert returned(run.outcomes[0]) == js.Num.of(10)  # (3 + Circle) * 2
    items = js.Array((js.Num.of(1), "b"))
    hidden = NodeTarget("shapes.ts", (), scope="hidden")  # not exported: the scope hooks chain
    run = run_node(local, tree, hidden, [NodeCall((items,))])
    assert returned(run.outcomes[0]) == js.Array(("b", js.Num.of(1)))
    run = run_node(local, tree, NodeTarget("shapes.ts", ("where",)), [NodeCall(())])
    where = returned(run.outcomes[0])
    assert isinstance(where, str) and where.endswith("shapes.ts:15:11)")  # the source's line


def test_mts_cts_and_tsx_files(local: Sandbox, tmp_path: Path) -> None:
    tree = package(
        tmp_path / "p",
        None,
        {
            "esm.mts": "export const twice = (n: number): number => n * 2;\n",
            "cjs.cts": "export function half(n: number): number { return n / 2; }\n",
            "view.tsx": (
                "const React = {\n"
                "  createElement: (t: string, p: null, ...c: unknown[]) => ({ t, c }),\n"
                "};\n"
                "export function view(name: string) { return <b>{name}</b>; }\n"
            ),
        },
    )
    two = (NodeCall((js.Num.of(4),)),)
    twice = run_node(local, tree, NodeTarget("esm.mts", ("twice",)), two).outcomes[0]
    half = run_node(local, tree, NodeTarget("cjs.cts", ("half",)), two).outcomes[0]
    assert (returned(twice), returned(half)) == (js.Num.of(8), js.Num.of(2))
    (view,) = run_node(local, tree, NodeTarget("view.tsx", ("view",)), [NodeCall(("x",))]).outcomes
    assert returned(view) == js.PlainObject(js.fields({"t": "b", "c": js.Array(("x",))}))


def test_the_loader_is_what_runs_typescript(
    local: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = package(tmp_path / "p", "module", {"shapes.ts": SHAPES, "helper.ts": HELPER})
    target, call = (
        NodeTarget("shapes.ts", ("area",)),
        NodeCall((js.PlainObject((("w", js.Num.of(1)),)),)),
    )
    assert returned(run_node(local, tree, target, [call]).outcomes[0]) == js.Num.of(6)
    monkeypatch.setattr("replicate.jail.node.for_files", lambda request, paths: request)
    (without,) = run_node(local, tree, target, [call]).outcomes
    assert without.status is Status.IMPORT_ERROR  # positive control: Node alone refuses it
    assert typescript.for_files(request := _request(tree), ["a.js"]) is request


def _request(tree: Path) -> typescript.SandboxRequest:
    from replicate.jail.node import NodeSettings, node_request

    return node_request(tree, b"{}", NodeSettings(), node=Path("/usr/bin/node"))


def test_the_loaders_variable_is_gone_before_the_repository_runs(
    local: Sandbox, tmp_path: Path
) -> None:
    tree = package(
        tmp_path / "p",
        None,
        {
            "env.ts": (
                "export const env = (): string[] =>\n"
                "  Object.keys(process.env).filter((k) => k.startsWith('REPLICATE'));\n"
            )
        },
    )
    (outcome,) = run_node(local, tree, NodeTarget("env.ts", ("env",)), [NodeCall(())]).outcomes
    assert returned(outcome) == js.Array(())


def test_corpus_tslib_typescript_source(local: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    tree = TSLIB  # an ES module: `export function bumpVersion(text: string, part: Part)`
    target = NodeTarget("src/version.ts", ("bumpVersion",))
    calls = [NodeCall(("1.2.3", "minor")), NodeCall(("1.2.3-rc.1", "patch")), NodeCall(("1",))]
    minor, patch, bad = run_node(local, tree, target, calls).outcomes
    assert (returned(minor), returned(patch)) == ("1.3.0", "1.2.3")
    assert bad.thrown == Thrown("SyntaxError", "not a version: 1")
    found = target_named(tree, "src/version.ts", "bumpVersion")
    stubbed = rewritten(tree, found)
    on_stub = run_node(local, tree, target, calls, candidate=stubbed).outcomes
    assert {o.thrown for o in on_stub} == {NOT_IMPLEMENTED}
    candidate = (
        "export function bumpVersion(text: string, part: Part): string {\n"
        "  const v: Version = parseVersion(text);\n"
        "  if (part === 'major') return `${v.major + 1}.0.0`;\n"
        "  if (part === 'minor') return `${v.major}.${v.minor + 1}.0`;\n"
        "  return `${v.major}.${v.minor}.${v.patch + (v.prerelease.length ? 0 : 1)}`;\n"
        "}\n"
    )
    spliced = rewritten(tree, found, candidate)
    again = run_node(local, tree, target, calls, candidate=spliced).outcomes
    assert again == (minor, patch, bad)
    monkeypatch.setattr("replicate.jail.node.for_files", lambda request, paths: request)
    without = run_node(local, tree, target, calls).outcomes  # positive control: no loader
    assert {o.status for o in without} == {Status.IMPORT_ERROR}


TS_TESTS = """\
import test from 'node:test';
import assert from 'node:assert';
import { area, type Shape } from '../shapes.js';

test('area', () => {
  const unit: Shape = { w: 1 };
  assert.strictEqual(area(unit), 6);
  assert.strictEqual(area({ w: 2 }, 3), 12);
});
"""


@pytest.mark.parametrize("kind", ["commonjs", "module"])
def test_a_typescript_test_file_recorded_and_replayed(
    local: Sandbox, tmp_path: Path, kind: str
) -> None:
    files = {"shapes.ts": SHAPES, "helper.ts": HELPER, "types.ts": TYPES}
    tree = package(tmp_path / kind, kind, files)
    (tree / "test").mkdir()
    (tree / "test" / "shapes.test.ts").write_text(TS_TESTS)
    area = NodeTarget("shapes.ts", (), scope="area")  # an ES module's export: by its binding
    harvest = record_tests(local, tree, [area], ["test/shapes.test.ts"])
    assert [f.exit_code for f in harvest.files] == [0]
    assert [r.outcome.value for r in harvest.calls] == [js.Num.of(6), js.Num.of(12)]
    assert replay(local, tree, harvest) == tuple(r.outcome for r in harvest.calls)


def test_an_es_module_class_methods_recorded_from_corpus_tslibs_tests(local: Sandbox) -> None:
    methods = ("get", "set", "hitRate")
    targets = [NodeTarget("src/cache.ts", ("BoundedCache",), CallKind.METHOD, m) for m in methods]
    harvest = record_tests(local, TSLIB, targets, ["test/cache.test.ts"])
    assert [f.exit_code for f in harvest.files] == [0]
    assert {r.target.member for r in harvest.calls} == set(methods)  # on the class, not a copy
    rate = [r for r in harvest.calls if r.target.member == "hitRate"]
    assert {r.outcome.value for r in rate} >= {js.Num.of(0), js.Num.of(0.5), js.Num.of(0.75)}
    assert all(isinstance(r.call.this, js.Instance) for r in rate)
    rates = Harvest(tuple(rate), ())  # replayed from the recorded instance's own fields
    assert replay(local, TSLIB, rates) == tuple(r.outcome for r in rate)
