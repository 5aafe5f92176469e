"""JavaScript mutants of a real pinned package's function graded through the jailed Node runner:
ms 2.1.3's `parse` (a binding its module does not export), on the calls its own cases make,
recorded by the harvest (ms's own test suite spells every unit; so do these). A mutant is
killed when any call's outcome differs from the original's (its value, its thrown error's
class, its arguments after the call) or its file does not load; the kill rate is printed, and
must clear the median the issue asks of JS tasks (0.9)."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.jail.node import NodeCall, NodeOutcome, NodeTarget, Status, run_node
from replicate.jail.node_harvest import record_tests, replay
from replicate.jail.node_widening import Widening, widen_calls
from replicate.languages.javascript_mutants import mutant_file, mutants
from replicate.sandbox import Sandbox, get_sandbox
from tests.integration.languages.test_npm_calls import target_named
from tests.integration.languages.test_npm_harvest import (
    CAMELCASE_TESTS,
    HEAD,
    PARSE,
    TESTS,
    ms_with_tests,
    with_tests,
)

MORE = """
test('more units', () => {
  for (const s of ['1.5h', '-1d', '-.5h', '2w', '3 years', '100 ms', '5sec', '1 hr', '2 mins',
                   '10 seconds', '3 weeks', '1y', '53 milliseconds', '1   s', '-100', '.5m',
                   '1 msecs', '2 hrs', '4 days', 'abc', '1 lightyear', '-3.5 s']) ms(s);
  for (const unit of ['year', 'yr', 'yrs', 'week', 'day', 'hour', 'hr', 'minute', 'min', 'mins',
                      'second', 'sec', 'millisecond', 'msec', 'ms', 'Y', 'H']) ms(`2 ${unit}`);
  assert.strictEqual(ms('1'.repeat(101)), undefined);
});
"""


def comparable(outcome: NodeOutcome) -> object:
    """What grading compares: the status, the value, the thrown error's class, the arguments."""
    thrown = outcome.thrown.type if outcome.thrown is not None else None
    return (outcome.status, outcome.value, thrown, outcome.args)


@pytest.fixture(scope="module")
def local() -> Sandbox:
    return get_sandbox("local")


def test_ms_parse_mutants_are_killed_by_its_recorded_calls(
    local: Sandbox, npm_repos: dict[str, Path], tmp_path: Path
) -> None:
    tree = ms_with_tests(npm_repos, tmp_path, {"ms.test.js": TESTS + MORE})
    harvest = record_tests(local, tree, [PARSE], ["test/ms.test.js"])
    assert len(harvest.calls) >= 25
    expected = [comparable(r.outcome) for r in harvest.calls]
    assert [comparable(o) for o in replay(local, tree, harvest)] == expected
    target = target_named(tree, "index.js", "parse")
    source = (tree / "index.js").read_bytes()
    found = mutants(source, target, limit=40)
    assert len(found) == 40
    killed = []
    for mutant in found:
        outcomes = replay(local, tree, harvest, mutant_file(source, mutant))
        assert all(o.status is not Status.RUNNER_ERROR for o in outcomes), mutant.operator
        killed.append([comparable(o) for o in outcomes] != expected)
    rate = sum(killed) / len(found)
    survivors = sorted({m.operator for m, k in zip(found, killed, strict=True) if not k})
    print(f"\nms parse: {sum(killed)} of {len(found)} mutants killed, kill rate {rate:.2f}")
    print(f"survivors' operators: {survivors}")
    assert rate >= 0.9


# (package, its test file, the target, its file and qualname): ms's parse (CommonJS) and
# camelcase's camelCase (an ES module's binding), each with the few calls of its basic cases
WIDENED_CASES = {
    "ms": ("ms.test.js", PARSE, "index.js", "parse"),
    "camelcase": (
        "camelcase.test.js",
        NodeTarget("index.js", (), scope="camelCase"),
        "index.js",
        "camelCase",
    ),
}


@pytest.mark.parametrize("package", sorted(WIDENED_CASES))
def test_widened_calls_kill_what_the_recorded_ones_miss(
    local: Sandbox, npm_repos: dict[str, Path], tmp_path: Path, package: str
) -> None:
    """With only the few calls of the basic cases recorded, the inputs fast-check widens from
    them (their outcomes the original's) kill more of the target's mutants."""
    test_file, target, path, qualname = WIDENED_CASES[package]
    text = HEAD + TESTS if package == "ms" else CAMELCASE_TESTS
    tree = with_tests(npm_repos, package, tmp_path, {test_file: text})
    recorded = record_tests(local, tree, [target], [f"test/{test_file}"])
    samples = [r.call.args for r in recorded.calls]
    widened = [NodeCall(args) for args in widen_calls(local, samples, Widening(count=150))]
    calls = [r.call for r in recorded.calls] + widened
    original = run_node(local, tree, target, calls).outcomes
    assert all(o.status in (Status.RETURNED, Status.RAISED) for o in original)
    source = (tree / path).read_bytes()
    found = mutants(source, target_named(tree, path, qualname), limit=30)
    by_recorded = by_widened = 0
    for mutant in found:
        outcomes = run_node(local, tree, target, calls, candidate=mutant_file(source, mutant))
        differs = [
            comparable(a) != comparable(b) for a, b in zip(outcomes.outcomes, original, strict=True)
        ]
        by_recorded += any(differs[: len(recorded.calls)])
        by_widened += any(differs)
    head = f"\n{package} {qualname}: of {len(found)} mutants, {len(recorded.calls)} recorded calls"
    print(f"{head} kill {by_recorded}, with {len(widened)} widened calls {by_widened}")
    assert by_widened > by_recorded
