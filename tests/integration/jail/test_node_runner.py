"""The Node runner in the real sandbox: values round-trip through it, its equality is Node's
`util.isDeepStrictEqual`, calls and their outcomes, and the jail's limits hold for Node."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from replicate.jail import node
from replicate.jail.node import (
    CallKind,
    NodeCall,
    NodeSettings,
    NodeTarget,
    Status,
    Thrown,
    run_node,
)
from replicate.sandbox import Sandbox, get_sandbox
from replicate.values import javascript as js
from tests.js_values import cyclic, values

MODULE = """\
const util = require('node:util');
exports.identity = function identity(x) { return x; };
exports.same = (a, b) => util.isDeepStrictEqual(a, b);
exports.push = (list, item) => { list.push(item); return list.length; };
exports.fail = () => { throw new RangeError('too far'); };
exports.later = async (x) => x * 2;
exports.refuse = async () => { throw new TypeError('no'); };
exports.leave = () => process.exit(0);
exports.spin = () => { for (;;) {} };
exports.hog = (n) => {
  const keep = [];
  for (let i = 0; i < n; i++) keep.push(new Array(1e6).fill(1));
  return keep.length;
};
exports.write = (file) => { require('node:fs').writeFileSync(file, 'x'); return true; };
exports.now = () => Date.now();
exports.random = () => [Math.random(), Math.random()];
exports.pair = () => [1, { a: 2 }];
exports.deep = (n) => { let v = []; for (let i = 0; i < n; i++) v = [v]; return v; };
exports.wide = (n) => new Array(n).fill(0);
exports.proxy = () => new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw 1; } });
exports.getter = () => ({ get g() { throw new Error('ran'); }, v: 1 });
exports.interfaces = () => Object.keys(require('node:os').networkInterfaces()).sort();
function hidden(x) { return x + 1; }
class Hidden { twice(n) { return n * 2; } }
class Counter {
  constructor() { this.n = 0; this.seen = []; }
  add(k) { this.n += k; this.seen.push(k); return this.n; }
  static zero() { return new Counter(); }
}
exports.Counter = Counter;
"""


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("js-tree")
    (root / "lib.js").write_text(MODULE)
    (root / "esm").mkdir()
    (root / "esm" / "package.json").write_text('{"type": "module"}')
    (root / "esm" / "lib.js").write_text(ESM)
    return root


ESM = """\
const hidden = (x) => x * 10;
class Secret { static make() { return 7; } }
export default function visible() { return hidden(1); }
"""


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return get_sandbox("local")


def call(sandbox: Sandbox, tree: Path, name: str, *args: js.JsValue) -> js.JsValue | None:
    (outcome,) = run_node(sandbox, tree, NodeTarget("lib.js", (name,)), [NodeCall(args)]).outcomes
    assert outcome.status is Status.RETURNED, outcome
    return outcome.value


def identities(sandbox: Sandbox, tree: Path, corpus: list[js.JsValue]) -> None:
    """Every value of `corpus` through the jailed runner and back, unchanged."""
    calls = [NodeCall((value,)) for value in corpus]
    run = run_node(sandbox, tree, NodeTarget("lib.js", ("identity",)), calls)
    for value, outcome in zip(corpus, run.outcomes, strict=True):
        assert (outcome.status, outcome.value, outcome.args) == (Status.RETURNED, value, (value,))


def num(x: float) -> js.Num:
    return js.Num.of(x)


CORPUS: list[js.JsValue] = [
    num(math.nan),
    num(-0.0),
    num(math.inf),
    num(-math.inf),
    num(0.1),
    num(1e21),
    num(5e-324),
    js.BigInt(-(2**100)),
    "\ud800 lone, \u2028, \x00, é",
    js.Undefined(),
    js.Null(),
    js.Array((js.Hole(), js.Undefined(), js.Null())),
    js.PlainObject(js.fields({"a": num(1), "b": js.PlainObject(())}), null_proto=True),
    js.Instance("Point", js.fields({"x": num(1), "y": js.Instance("Point", ())})),
    js.ErrorValue("TypeError", "bad", js.fields({"code": "E_BAD"})),
    js.ErrorValue("ParseError", "custom"),
    js.js_map(((num(1), "one"), ("k", js.Array(())), (js.PlainObject(()), js.Null()))),
    js.js_set(("a", num(2), js.BigInt(3))),
    js.Date(num(1_700_000_000_123)),
    js.Date(num(math.nan)),
    js.RegExp("a(b)+", "gi", num(3)),
    js.Typed("Float32Array", (num(1.5), num(-0.0), num(math.nan))),
    js.Typed("BigInt64Array", (js.BigInt(-(2**63)), js.BigInt(7))),
    js.Buffer(b"\x00\xffab"),
    js.Function("named"),
    js.Symbol("tag"),
    js.Symbol(None),
    *cyclic(),
]


def test_a_corpus_of_values_round_trips_through_node(local: Sandbox, tree: Path) -> None:
    identities(local, tree, CORPUS)


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow],
)
@given(st.lists(values(map_keys=False), min_size=30, max_size=30))
def test_drawn_values_round_trip_through_node(
    local: Sandbox, tree: Path, corpus: list[js.JsValue]
) -> None:
    identities(local, tree, corpus)


# pairs whose JS deepStrictEqual each side of the record equality must agree with
PAIRS: list[tuple[js.JsValue, js.JsValue]] = [
    (num(math.nan), num(math.nan)),
    (num(-0.0), num(0.0)),
    (num(1), js.BigInt(1)),
    (js.Undefined(), js.Null()),
    (js.Array((js.Hole(),)), js.Array((js.Undefined(),))),
    (js.PlainObject(js.fields({"a": num(1), "b": num(2)})),) * 2,
    (js.PlainObject(js.fields({"a": num(1)})), js.PlainObject(js.fields({"a": num(2)}))),
    (js.PlainObject(()), js.PlainObject((), null_proto=True)),
    (js.Instance("Point", ()), js.Instance("Vector", ())),
    (js.Instance("Point", ()), js.PlainObject(())),
    (js.js_set(("a", "b")), js.js_set(("b", "a"))),
    (js.js_set(("a",)), js.js_set(("a", "b"))),
    (js.js_map((("k", num(1)),)), js.js_map((("k", num(2)),))),
    (js.ErrorValue("TypeError", "x"), js.ErrorValue("TypeError", "y")),
    (js.ErrorValue("TypeError", "x"), js.ErrorValue("RangeError", "x")),
    (js.Date(num(5)), js.Date(num(5))),
    (js.Date(num(5)), js.Date(num(6))),
    (js.RegExp("a", "g"), js.RegExp("a", "i")),
    (js.Typed("Uint8Array", (num(1),)), js.Typed("Int8Array", (num(1),))),
    (js.Typed("Uint8Array", (num(1),)), js.Typed("Uint8Array", (num(1),))),
    ("1", num(1)),
    (js.BigInt(10**30), js.BigInt(10**30)),
]


def test_record_equality_is_node_deep_strict_equality(local: Sandbox, tree: Path) -> None:
    calls = [NodeCall((a, b)) for a, b in PAIRS]
    run = run_node(local, tree, NodeTarget("lib.js", ("same",)), calls)
    node_says = [outcome.value for outcome in run.outcomes]
    assert node_says == [a == b for a, b in PAIRS]
    assert True in node_says and False in node_says
    # the departures, said in values/javascript.py: Node compares these by identity, or its
    # Invalid Date's NaN time as unequal to itself; the records do not
    departures = [
        (js.Function("f"), js.Function("f")),
        (js.Symbol("s"), js.Symbol("s")),
        (js.Date(num(math.nan)), js.Date(num(math.nan))),
    ]
    calls = [NodeCall(pair) for pair in departures]
    run = run_node(local, tree, NodeTarget("lib.js", ("same",)), calls)
    assert [o.value for o in run.outcomes] == [False] * 3
    assert all(a == b for a, b in departures)


@settings(
    max_examples=3,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow],
)
@given(st.lists(values(identities=False, map_keys=False), min_size=10, max_size=10))
def test_drawn_values_are_equal_in_node_when_their_records_are(
    local: Sandbox, tree: Path, drawn: list[js.JsValue]
) -> None:
    """Every pair of the drawn values, each with itself too: Node's isDeepStrictEqual on the
    rebuilt values against the records' equality (functions, symbols and Invalid Dates left
    out: the records' two departures from it, and Node's NaN time, unequal to itself)."""
    pairs = [(a, b) for a in drawn for b in drawn]
    run = run_node(local, tree, NodeTarget("lib.js", ("same",)), [NodeCall(p) for p in pairs])
    assert [o.value for o in run.outcomes] == [a == b for a, b in pairs]


def test_mutated_arguments_and_this_are_reported(local: Sandbox, tree: Path) -> None:
    (pushed,) = run_node(
        local, tree, NodeTarget("lib.js", ("push",)), [NodeCall((js.Array(()), "x"))]
    ).outcomes
    assert (pushed.value, pushed.args) == (num(1), (js.Array(("x",)), "x"))
    counter = js.Instance("Counter", js.fields({"n": num(2), "seen": js.Array((num(2),))}))
    method = NodeTarget("lib.js", ("Counter",), CallKind.METHOD, "add")
    (added,) = run_node(local, tree, method, [NodeCall((num(3),), counter)]).outcomes
    after = js.Instance("Counter", js.fields({"n": num(5), "seen": js.Array((num(2), num(3)))}))
    assert (added.value, added.this) == (num(5), after)
    static = NodeTarget("lib.js", ("Counter",), CallKind.STATIC, "zero")
    (zero,) = run_node(local, tree, static, [NodeCall(())]).outcomes
    assert zero.value == js.Instance("Counter", js.fields({"n": num(0), "seen": js.Array(())}))


def test_thrown_errors_and_promises(local: Sandbox, tree: Path) -> None:
    target = NodeTarget("lib.js", ("fail",))
    (failed,) = run_node(local, tree, target, [NodeCall(())]).outcomes
    assert (failed.status, failed.thrown) == (Status.RAISED, Thrown("RangeError", "too far"))
    assert call(local, tree, "later", num(21)) == js.Settled(num(42))
    (refused,) = run_node(local, tree, NodeTarget("lib.js", ("refuse",)), [NodeCall(())]).outcomes
    assert refused.thrown == Thrown("TypeError", "no", rejected=True)


def test_a_missing_module_or_export_is_an_import_error(local: Sandbox, tree: Path) -> None:
    for target in (NodeTarget("nope.js", ("x",)), NodeTarget("lib.js", ("missing",))):
        (outcome,) = run_node(local, tree, target, [NodeCall(())]).outcomes
        assert outcome.status is Status.IMPORT_ERROR


def test_process_exit_during_a_call_is_a_failure(local: Sandbox, tree: Path) -> None:
    run = run_node(local, tree, NodeTarget("lib.js", ("leave",)), [NodeCall(()), NodeCall(())])
    assert run.exit_code == 0  # the process says it succeeded...
    assert [o.status for o in run.outcomes] == [Status.RUNNER_ERROR] * 2  # ...and proves nothing
    assert not any(o.passed for o in run.outcomes)


def test_time_and_memory_limits_end_the_run(local: Sandbox, tree: Path) -> None:
    spin = run_node(
        local, tree, NodeTarget("lib.js", ("spin",)), [NodeCall(())], settings=NodeSettings(3)
    )
    assert spin.timed_out and spin.outcomes[0].status is Status.TIMEOUT
    hog = run_node(
        local,
        tree,
        NodeTarget("lib.js", ("hog",)),
        [NodeCall((num(0),)), NodeCall((num(1e9),))],
        settings=NodeSettings(timeout_s=60, memory_mb=384),
    )
    assert not hog.timed_out
    # Node started and answered the first call (its memory limit is not its start's failure)
    assert [o.status for o in hog.outcomes] == [Status.RETURNED, Status.RUNNER_ERROR]


def test_the_tree_is_read_only_and_there_is_no_network(local: Sandbox, tree: Path) -> None:
    # positive control: without isolation, the same calls write into the tree and see the
    # host's network interfaces
    plain = get_sandbox("plain")
    assert call(plain, tree, "write", str(tree / "planted")) is True
    assert (tree / "planted").exists()
    (tree / "planted").unlink()
    host = call(plain, tree, "interfaces")
    assert isinstance(host, js.Array) and len(host.items) > 1
    written = run_node(
        local, tree, NodeTarget("lib.js", ("write",)), [NodeCall((str(tree / "planted"),))]
    )
    assert written.outcomes[0].status is Status.RAISED
    assert "EROFS" in written.outcomes[0].thrown.message  # type: ignore[union-attr]
    assert not (tree / "planted").exists()
    assert call(local, tree, "interfaces") == js.Array(("lo",))


PATCHES = """\
let taken = 0;
for (const key of ['0', '1', 'args', 'value', 'this', 'error', 'promise', 'get', 'set']) {
  Object.defineProperty(Object.prototype, key, {
    __proto__: null,
    set(v) { taken += 1; },
    get() { return key === 'promise' || key === 'get' ? () => true : undefined; },
    configurable: true,
  });
}
"""


def test_setters_and_getters_on_the_prototypes_do_not_change_an_outcome(tmp_path: Path) -> None:
    """The module, at its import, puts setters (and getters) on Object.prototype for the
    names and indexes the runner builds its reports with: a runner that assigned them would
    hand its arguments, value and array items to the module and report them missing (or the
    value as a promise)."""
    (tmp_path / "lib.js").write_text(PATCHES + MODULE)
    sandbox = get_sandbox("local")
    expected = js.Array((num(1), js.PlainObject(js.fields({"a": num(2)}))))
    assert call(sandbox, tmp_path, "pair") == expected
    # the arguments are rebuilt, and reported, past the setters too
    assert call(sandbox, tmp_path, "identity", expected) == expected
    (failed,) = run_node(
        sandbox, tmp_path, NodeTarget("lib.js", ("fail",)), [NodeCall(())]
    ).outcomes
    assert failed.thrown == Thrown("RangeError", "too far")


def test_depth_and_size_are_bounded_and_nothing_of_a_value_runs(local: Sandbox, tree: Path) -> None:
    deep = call(local, tree, "deep", num(node.MAX_DEPTH + 10))
    for _ in range(node.MAX_DEPTH):
        assert isinstance(deep, js.Array) and len(deep.items) == 1
        deep = deep.items[0]
    assert deep == js.Cut("depth")
    wide = call(local, tree, "wide", num(node.MAX_ITEMS + 5))
    assert isinstance(wide, js.Array) and wide.items[-1] == js.Cut("size")
    assert len(wide.items) <= node.MAX_ITEMS + 1
    assert call(local, tree, "proxy") == js.Opaque("Proxy")
    assert call(local, tree, "getter") == js.PlainObject(js.fields({"g": js.Getter(), "v": num(1)}))


def test_bindings_a_module_does_not_export(local: Sandbox, tree: Path) -> None:
    calls = {
        NodeTarget("lib.js", (), scope="hidden"): NodeCall((num(1),)),
        NodeTarget("lib.js", (), CallKind.METHOD, "twice", "Hidden"): NodeCall(
            (num(4),), js.Instance("Hidden", ())
        ),
        NodeTarget("esm/lib.js", (), scope="hidden"): NodeCall((num(2),)),
        NodeTarget("esm/lib.js", (), CallKind.STATIC, "make", "Secret"): NodeCall(()),
        NodeTarget("esm/lib.js", ("default",)): NodeCall(()),
    }
    found = [run_node(local, tree, t, [c]).outcomes[0].value for t, c in calls.items()]
    assert found == [num(2), num(8), num(20), num(7), num(10)]
    for missing in (
        NodeTarget("lib.js", (), scope="nope"),
        NodeTarget("esm/lib.js", (), scope="no"),
    ):
        assert run_node(local, tree, missing, [NodeCall(())]).outcomes[0].status is (
            Status.IMPORT_ERROR
        )


def test_a_seeded_random_and_a_shifted_clock(local: Sandbox, tree: Path) -> None:
    def run(name: str, settings: NodeSettings) -> js.JsValue | None:
        target = NodeTarget("lib.js", (name,))
        return run_node(local, tree, target, [NodeCall(())], settings=settings).outcomes[0].value

    seeded = [run("random", NodeSettings(random_seed=seed)) for seed in (7, 7, 8)]
    assert seeded[0] == seeded[1] != seeded[2]
    assert run("random", NodeSettings()) != run("random", NodeSettings())
    now, later = (run("now", NodeSettings(clock_shift_days=days)) for days in (0, 3))
    assert isinstance(now, js.Num) and isinstance(later, js.Num)
    days = (later.value - now.value) / 86_400_000
    assert 2.9 < days < 3.1


TAMPERING = """\
const shared = require('node:util').types;
shared.isProxy = () => false;
shared.isDate = () => true;
for (const key of Object.keys(require.cache)) {
  if (!key.endsWith('values.cjs')) continue;
  const parts = require.cache[key].exports;
  parts.encoder = () => () => ({ t: 'str', v: 'forged' });
  parts.thrown = () => ({ type: 'Forged', msg: '' });
}
exports.tampered = () => [
  shared.isProxy(new Proxy({}, {})),
  Object.keys(require.cache).filter((k) => k.endsWith('values.cjs'))
    .map((k) => require.cache[k].exports.thrown().type),
];
"""


def test_the_runners_parts_and_util_types_are_taken_before_the_module_loads(
    tmp_path: Path,
) -> None:
    """The module, at its import, replaces util.types' checks and the runner's value functions
    in require.cache: a runner that looked them up at each call would report forged values,
    or call a Proxy's traps."""
    (tmp_path / "lib.js").write_text(TAMPERING + MODULE)
    sandbox = get_sandbox("local")
    # the control: in the runner's own process, the module's replacements are in place
    assert call(sandbox, tmp_path, "tampered") == js.Array((False, js.Array(("Forged",))))
    assert call(sandbox, tmp_path, "pair") == js.Array(
        (num(1), js.PlainObject(js.fields({"a": num(2)})))
    )
    assert call(sandbox, tmp_path, "proxy") == js.Opaque("Proxy")
    (failed,) = run_node(
        sandbox, tmp_path, NodeTarget("lib.js", ("fail",)), [NodeCall(())]
    ).outcomes
    assert failed.thrown == Thrown("RangeError", "too far")
