"""Real npm packages called through the jailed Node runner: the original gives the expected
value, its stubbed target an error outcome, a candidate that exits the process a failure.
ms 2.1.3 (CommonJS), camelcase 8.0.0 (an ES module), semver 7.6.3 (CommonJS, classes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.core import Target
from replicate.jail.node import (
    CallKind,
    NodeCall,
    NodeOutcome,
    NodeTarget,
    Status,
    Thrown,
    run_node,
)
from replicate.languages import get_language
from replicate.sandbox import Sandbox, get_sandbox
from replicate.values import javascript as js

JS = get_language("javascript")
NOT_IMPLEMENTED = Thrown("Error", "not implemented")


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return get_sandbox("local")


def one(
    sandbox: Sandbox, tree: Path, target: NodeTarget, call: NodeCall, candidate: bytes | None = None
) -> NodeOutcome:
    (outcome,) = run_node(sandbox, tree, target, [call], candidate=candidate).outcomes
    return outcome


def target_named(root: Path, path: str, qualname: str) -> Target:
    (found,) = [t for t in JS.discover(root).targets if (t.path, t.qualname) == (path, qualname)]
    return found


def rewritten(root: Path, target: Target, candidate: str | None = None) -> bytes:
    """The target's file with `target` stubbed, or with `candidate` spliced in its place."""
    stubbed = JS.stub((root / target.path).read_bytes(), target)
    return stubbed if candidate is None else JS.splice(stubbed, candidate, target)


def test_ms(local: Sandbox, npm_repos: dict[str, Path]) -> None:
    root = npm_repos["ms"]
    export = NodeTarget("index.js", ())  # module.exports = function (val, options)
    call = NodeCall(("2 days",))
    assert one(local, root, export, call) == NodeOutcome(
        Status.RETURNED, value=js.Num.of(172_800_000), args=("2 days",)
    )
    parse = target_named(root, "index.js", "parse")  # what the export calls on a string
    stubbed = rewritten(root, parse)
    outcome = one(local, root, export, call, stubbed)
    assert (outcome.status, outcome.thrown) == (Status.RAISED, NOT_IMPLEMENTED)
    # parse itself, which the module does not export
    scoped = NodeTarget("index.js", (), scope="parse")
    assert one(local, root, scoped, NodeCall(("1h",))).value == js.Num.of(3_600_000)
    outcome = one(local, root, scoped, NodeCall(("1h",)), stubbed)
    assert (outcome.status, outcome.thrown) == (Status.RAISED, NOT_IMPLEMENTED)
    exits = "function parse(str) { process.exit(0); }"
    outcome = one(local, root, export, call, rewritten(root, parse, exits))
    assert outcome.status is Status.RUNNER_ERROR and not outcome.passed
    assert "exit code 0" in outcome.detail


def test_camelcase_an_es_module(local: Sandbox, npm_repos: dict[str, Path]) -> None:
    root = npm_repos["camelcase"]
    export = NodeTarget("index.js", ("default",))
    options = js.PlainObject(js.fields({"pascalCase": True}))
    outcomes = run_node(
        local, root, export, [NodeCall(("foo-bar",)), NodeCall(("foo_bar baz", options))]
    ).outcomes
    assert [o.value for o in outcomes] == ["fooBar", "FooBarBaz"]
    stubbed = rewritten(root, target_named(root, "index.js", "camelCase"))
    outcome = one(local, root, export, NodeCall(("foo-bar",)), stubbed)
    assert (outcome.status, outcome.thrown) == (Status.RAISED, NOT_IMPLEMENTED)


def test_semver_functions_and_a_method_on_a_rebuilt_this(
    local: Sandbox, npm_repos: dict[str, Path]
) -> None:
    root = npm_repos["semver"]
    satisfies = NodeTarget("functions/satisfies.js", ())
    calls = [NodeCall(("1.2.3", "^1.0.0")), NodeCall(("2.0.0", "^1.0.0"))]
    assert [o.value for o in run_node(local, root, satisfies, calls).outcomes] == [True, False]
    parsed = one(local, root, NodeTarget("functions/parse.js", ()), NodeCall(("1.2.3-beta.1",)))
    version = parsed.value
    assert isinstance(version, js.Instance) and version.class_name == "SemVer"
    assert dict(version.fields)["prerelease"] == js.Array(("beta", js.Num.of(1)))
    # a method called on `this` rebuilt from the fields the parse returned
    compare = NodeTarget("classes/semver.js", (), CallKind.METHOD, "compare")
    outcome = one(local, root, compare, NodeCall(("1.2.3",), version))
    assert (outcome.status, outcome.value, outcome.this) == (
        Status.RETURNED,
        js.Num.of(-1),
        version,
    )
    method = target_named(root, "classes/semver.js", "SemVer.compare")
    outcome = one(local, root, compare, NodeCall(("1.2.3",), version), rewritten(root, method))
    assert (outcome.status, outcome.thrown) == (Status.RAISED, NOT_IMPLEMENTED)


def test_a_candidate_without_isolation_runs_on_a_copy(npm_repos: dict[str, Path]) -> None:
    root = npm_repos["ms"]
    stubbed = rewritten(root, target_named(root, "index.js", "parse"))
    scoped = NodeTarget("index.js", (), scope="parse")
    outcome = one(get_sandbox("plain"), root, scoped, NodeCall(("1h",)), stubbed)
    assert outcome.thrown == NOT_IMPLEMENTED
    assert b"not implemented" not in (root / "index.js").read_bytes()  # the original untouched
