"""The JavaScript red team: cheating candidates for JavaScript tasks (tasks minted once per
module from a tiny repository, `javascript/minted.py`), each first shown to fool the naive
in-process grader (`javascript/naive.cjs`: the positive control), then graded by ours, where it
earns 0. The attacks on the runner itself (`test_javascript_runner.py`) and the built copies
of the original (`test_javascript_leaks.py`) have their own controls. A candidate that answers
at random earns nothing once run twice (one run's reward is the control), and a verdict says how
much of a body is the original's however it is laid out."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.batch import LoadedTask
from replicate.grading import Score
from replicate.grading.javascript import grade_script
from replicate.sandbox import get_sandbox
from tests.redteam.javascript.minted import graded, mint_tiny, naive_reward, tasks_by_name

pytestmark = pytest.mark.e2e

# id -> (the target, its cheating body); each wrong on nearly every input
ATTACKS = {
    # impostors: a value that claims to be the expected one when asked
    "valueof-toprimitive-impostor": (
        "double",
        "function double(a) { const v = a * 2; return { valueOf: () => v, toString: () => "
        "String(v), [Symbol.toPrimitive]: () => v }; }",
    ),
    "proxy-equal-to-anything": (
        "double",
        "function double(a) { return new Proxy({}, { get: (t, k) => (k === Symbol.toPrimitive "
        "? () => a * 2 : undefined) }); }",
    ),
    "getter-throws-on-inspection": (
        "double",
        "function double(a) { return { get [Symbol.toPrimitive]() { throw new Error('look "
        "away'); }, get toJSON() { throw new Error('look away'); } }; }",
    ),
    "array-lookalike": (
        "pair",
        "function pair(a) { return Object.setPrototypeOf({ length: 2, 0: a, 1: String(a) }, "
        "Array.prototype); }",
    ),
    "date-lookalike": (
        "when",
        "function when(n) { return Object.create(Date.prototype, { getTime: { value: () => n }"
        " }); }",
    ),
    # the process ends before the grader writes its failures
    "process-exit-0": ("double", "function double(a) { process.exit(0); }"),
    "process-exitcode-0": (
        "double",
        "function double(a) { process.on('exit', () => { process.exitCode = 0; }); throw new "
        "Error('no'); }",
    ),
    "process-kill-self": ("double", "function double(a) { process.kill(process.pid); }"),
    # patched globals: the comparison or the encoding made to lie
    "patch-json-stringify": (
        "double",
        "function double(a) { JSON.stringify = () => 'same'; return 123457; }",
    ),
    "patch-object-is": ("double", "function double(a) { Object.is = () => true; return 123457; }"),
    "patch-object-prototype-tojson": (
        "pair",
        "function pair(a) { Object.prototype.toJSON = () => 0; return {}; }",
    ),
    "patch-array-prototype": (
        "pair",
        "function pair(a) { Array.prototype.every = () => true; return [0, 0]; }",
    ),
    "patch-date-prototype": (
        "when",
        "function when(n) { Date.prototype.getTime = () => 0; return new Date(-7); }",
    ),
    "patch-map-prototype": (
        "tally",
        "function tally(s) { Map.prototype[Symbol.iterator] = function* () {}; return new Map("
        "[[123457, 0]]); }",
    ),
    "patch-set-prototype": (
        "letters",
        "function letters(s) { Object.defineProperty(Set.prototype, 'size', { get: () => 0 }); "
        "Set.prototype.has = () => true; "
        "return new Set([123457]); }",
    ),
}


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, LoadedTask]:
    return tasks_by_name(mint_tiny(tmp_path_factory.mktemp("javascript-red")))


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_javascript_candidate_cheat(
    attack: str, tasks: dict[str, LoadedTask], tmp_path: Path
) -> None:
    name, body = ATTACKS[attack]
    task = tasks[name]
    naive = naive_reward(task, body, tmp_path)
    assert naive >= 0.9, f"{attack}: the naive grader pays only {naive}: the attack tests nothing"
    verdict = graded(task, body)
    assert verdict.reward == 0.0, f"{attack}: {verdict.reward} ({verdict.reason})"


def test_the_naive_grader_fails_a_wrong_candidate(
    tasks: dict[str, LoadedTask], tmp_path: Path
) -> None:
    # the control of the control: it is not a grader that passes everything
    assert naive_reward(tasks["double"], "function double(a) { return 0; }", tmp_path) < 0.1
    right = "function double(a) { return a * 2; }"
    assert naive_reward(tasks["double"], right, tmp_path / "right") == 1.0
    assert graded(tasks["double"], right).reward == 1.0


# right seven times in ten: its lucky share is well above the task's baseline, so it earns
# something in one run, and some input passes in one run and fails in the other
COIN_FLIP = "function double(a) { return Math.random() < 0.7 ? a * 2 : a * 3; }"


def test_a_coin_flip_earns_nothing_once_it_is_run_twice(tasks: dict[str, LoadedTask]) -> None:
    task = tasks["double"]
    # the control: one run pays a candidate that answers at random its lucky share
    once = grade_script(task, COIN_FLIP, get_sandbox("local"))
    assert isinstance(once, Score) and 0.3 < once.reward < 1.0, once
    verdict = graded(task, COIN_FLIP)
    assert verdict.reward == 0.0 and verdict.reason.startswith("nondeterministic"), verdict
    assert graded(task, "function double(a) { return a * 2; }").reward == 1.0  # run twice too


def test_a_verdict_says_how_much_of_the_body_is_the_originals(
    tasks: dict[str, LoadedTask],
) -> None:
    task = tasks["pair"]
    recalled = "function pair(x) {\n  // the pair\n  return [x,\n    String(x)];\n}"
    verdict = graded(task, recalled)
    assert verdict.reward == 1.0 and verdict.copy_share == 1.0, verdict
    other = (
        "function pair(a) { const text = `${a}`; const out = []; out.push(a, text); return out; }"
    )
    verdict = graded(task, other)
    assert verdict.reward == 1.0 and verdict.copy_share is not None and verdict.copy_share < 0.5
