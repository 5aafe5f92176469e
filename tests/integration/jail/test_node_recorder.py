"""The harvest's recorder (`runner_js/record.cjs`) on a small CommonJS module, in the jail: the
arguments before and after a call that mutates them, a returned promise awaited, a callback
argument (recorded with each call the target made to it and what it answered, which its replay
answers again; a candidate calling it otherwise is told so), a binding
whose function the module exports recorded through the export too, a `const` binding left
unwrapped, and records written before the test file exits kept; the stable calls are those that
replay the same under other seeds and clocks (a call reading the clock is not)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from replicate.jail.node import NodeCall, NodeSettings, NodeTarget, Status
from replicate.jail.node_harvest import record_tests, replay, stable
from replicate.sandbox import get_sandbox
from replicate.values import javascript as js

MODULE = """'use strict';
function push(list, item) { list.push(item); return list.length; }
async function later(x) { return x * 2; }
function each(list, f) { return list.map(f); }
const fixed = (x) => x + 1;
function stamp(x) { return x + Date.now(); }
module.exports = { push, later, each, fixed, stamp, calls: () => fixed(1) };
"""
TESTS = """'use strict';
const assert = require('node:assert');
const m = require('../lib.js');
assert.strictEqual(m.push([1], 2), 2);
m.later(21).then((v) => {
  assert.strictEqual(v, 42);
  assert.deepStrictEqual(m.each([1, 2], (x) => x + 1), [2, 3]);
  assert.strictEqual(m.calls(), 2);
  m.stamp(1);
  process.exit(0);
});
"""


def test_what_the_recorder_records(tmp_path: Path) -> None:
    (tmp_path / "lib.js").write_text(MODULE)
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "lib.test.js").write_text(TESTS)
    push = NodeTarget("lib.js", (), scope="push")
    later = NodeTarget("lib.js", ("later",))
    each = NodeTarget("lib.js", ("each",))
    fixed = NodeTarget("lib.js", (), scope="fixed")
    stamp = NodeTarget("lib.js", ("stamp",))
    local = get_sandbox("local")
    targets = [push, later, each, fixed, stamp]
    harvest = record_tests(local, tmp_path, targets, ["test/lib.test.js"])
    assert [f.exit_code for f in harvest.files] == [0]
    assert [r.target for r in harvest.calls] == [push, later, each, stamp]  # not the const
    pushed, doubled, mapped, _ = harvest.calls
    one, two = js.Num.of(1), js.Num.of(2)
    assert pushed.call == NodeCall((js.Array((one,)), two))  # before the call
    assert pushed.outcome.args == (js.Array((one, two)), two)  # after it
    assert (doubled.outcome.status, doubled.outcome.value) == (
        Status.RETURNED,
        js.Settled(js.Num.of(42)),
    )
    assert mapped.outcome.value == js.Array((two, js.Num.of(3)))
    callback = mapped.call.args[1]
    assert isinstance(callback, js.Function) and callback.answers is not None
    assert [a.value for a in callback.answers] == [two, js.Num.of(3)]  # f(1, 0, [1, 2]) -> 2, ...
    again = replay(local, tmp_path, harvest)
    assert again[:3] == (pushed.outcome, doubled.outcome, mapped.outcome)  # the callback answers
    runs = [NodeSettings(random_seed=1), NodeSettings(random_seed=2, clock_shift_days=400)]
    assert stable(local, tmp_path, harvest, runs) == (pushed, doubled, mapped)  # not the clock's
    # a candidate that calls it with other arguments gets no answer: told, not given one
    other = MODULE.replace("return list.map(f);", "return list.map((x) => f(x * 2));").encode()
    (_, _, wrong, _) = replay(local, tmp_path, harvest, other)
    assert wrong.thrown is not None and "never called the function argument" in wrong.thrown.message


VISIBILITY_MODULE = """'use strict';
function inner(x) { return x * 10; }
function outer(x) { return inner(x) + 1; }
module.exports = { inner, outer };
"""
VISIBILITY_TESTS = """'use strict';
const assert = require('node:assert');
const { inner, outer } = require('../lib.js');
const helper = (x) => inner(x);  // a helper of the test file's own: still the test's call
assert.strictEqual(inner(1), 10);
assert.strictEqual(outer(2), 21);  // inner(2), made by the library
assert.strictEqual(helper(3), 30);
"""


def test_a_call_is_visible_when_the_test_file_made_it(tmp_path: Path) -> None:
    """The recorder marks the calls the test file made itself, not those the library made while
    it ran (what a table of the visible calls, a degenerate program, may answer)."""
    (tmp_path / "lib.js").write_text(VISIBILITY_MODULE)
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "lib.test.js").write_text(VISIBILITY_TESTS)
    inner = NodeTarget("lib.js", (), scope="inner")
    harvest = record_tests(get_sandbox("local"), tmp_path, [inner], ["test/lib.test.js"])
    seen = [(r.call.args[0], r.visible) for r in harvest.calls]
    assert seen == [(js.Num.of(1), True), (js.Num.of(2), False), (js.Num.of(3), True)]


OPTIONS_MODULE = """'use strict';
function parseWith(text, options) { return options.decoder(text, options.depth).toUpperCase(); }
module.exports = { parseWith };
"""
OPTIONS_TESTS = """'use strict';
const assert = require('node:assert');
const { parseWith } = require('../lib.js');
const decoder = (s, depth) => s + '!'.repeat(depth);
const options = { decoder, depth: 2 };
assert.strictEqual(parseWith('ab', options), 'AB!!');
assert.strictEqual(options.decoder, decoder);  // the caller's own function, put back
"""


def test_a_function_in_an_options_object_is_answered_too(tmp_path: Path) -> None:
    """A callback in a plain object argument (an options bag) is swapped for the noting wrapper
    during the call only: the caller's object keeps its own function, and the call replays."""
    (tmp_path / "lib.js").write_text(OPTIONS_MODULE)
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "lib.test.js").write_text(OPTIONS_TESTS)
    target = NodeTarget("lib.js", ("parseWith",))
    local = get_sandbox("local")
    harvest = record_tests(local, tmp_path, [target], ["test/lib.test.js"])
    assert [f.exit_code for f in harvest.files] == [0]
    (recorded,) = harvest.calls
    options = recorded.call.args[1]
    assert isinstance(options, js.PlainObject)
    decoder = dict(options.fields)["decoder"]
    assert isinstance(decoder, js.Function) and decoder.answers is not None
    assert replay(local, tmp_path, harvest) == (recorded.outcome,)
    # the control: the same call with the decoder by name only does not replay
    bare = js.PlainObject(js.fields({**dict(options.fields), "decoder": js.Function("decoder")}))
    call = replace(recorded.call, args=(recorded.call.args[0], bare))
    (without,) = replay(local, tmp_path, replace(harvest, calls=(replace(recorded, call=call),)))
    assert without != recorded.outcome and without.thrown is not None
