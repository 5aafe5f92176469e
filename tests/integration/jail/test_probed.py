"""A returned function without a verified name (a closure, a lambda, a partial of one) is encoded by
what it does: the runner calls it on probes drawn from the input, inside the call's time window.

The runner runs as the jail runs it (`run_runner`); outcomes are scored as grading scores them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from replicate.core.records import CallInput, GradingSettings
from replicate.grading.compare import compare_outcome, is_gradable, same_outcome
from replicate.grading.reward import score
from replicate.jail import wire
from replicate.jail.runner.encoding import encode
from tests.integration.jail.test_runner import _blob, printed_under_seeds, run_runner

SETTINGS = GradingSettings()

MAKER = (
    "def make(n, label='k'):\n"
    "    def key(x):\n"
    "        return x * n\n"
    "    return key, [lambda y: (label, y)]\n"
)
SAME = (  # written differently, behaves the same on every probe
    "def make(n, label='k'):\n    return (lambda x: x * n), [lambda z: (label, z)]\n"
)
DIFFERS = (  # differs on the string probes only
    "def make(n, label='k'):\n"
    "    def key(x):\n"
    "        return x if type(x) is str else x * n\n"
    "    return key, [lambda y: (label, y)]\n"
)
INPUTS = [_blob([2]), _blob([3], {"label": "b"}), _blob([-1])]


def _graded(tmp_path: Path, source: str, module: str, **options: Any) -> dict[int, Any]:
    run = run_runner(tmp_path, source, "make", INPUTS, module=module, **options)
    return {i: run.outcome(i) for i in range(len(INPUTS))}


def _reward(expected: dict[int, Any], got: dict[int, Any]) -> float:
    inputs = [CallInput(index=i, pickle_b64=blob) for i, blob in enumerate(INPUTS)]
    return score(inputs, expected, got, SETTINGS).reward


def test_a_returned_closure_is_graded_by_what_it_does(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {}
    exec(MAKER, namespace)
    value = encode(namespace["make"](2))  # as the runner encoded it before probing
    unprobed = {"status": "returned", "value": value, "args": [encode(2)], "kwargs": {}}
    assert not is_gradable(unprobed, SETTINGS)  # so the target was dropped at gen

    expected = _graded(tmp_path, MAKER, "ref_make")
    assert all(is_gradable(outcome, SETTINGS) for outcome in expected.values())
    key, nested = expected[0]["value"]["v"]
    assert key["t"] == wire.PROBED and nested["v"][0]["t"] == wire.PROBED
    assert 8 <= len(key["v"]) <= wire.MAX_PROBES
    assert key["v"][0]["args"] == [encode(2)] and key["v"][0]["v"] == encode(4)

    assert _reward(expected, _graded(tmp_path, MAKER, "ref_again")) == 1.0
    assert _reward(expected, _graded(tmp_path, SAME, "cand_same")) == 1.0
    differs = _graded(tmp_path, DIFFERS, "cand_differs")
    assert _reward(expected, differs) < 1.0
    mismatch = compare_outcome(expected[0], differs[0], SETTINGS)
    assert mismatch is not None
    assert (mismatch.path, mismatch.expected, mismatch.got) == ("return[0]('a')", "'aa'", "'a'")


def test_a_returned_function_that_hangs_when_probed_times_out(tmp_path: Path) -> None:
    expected = _graded(tmp_path, MAKER, "ref_hang")
    hangs = "def make(n, label='k'):\n    def key(x):\n        while True:\n            pass\n"
    swallows = (  # catching the alarm in each probe does not help either
        "def make(n, label='k'):\n"
        "    def key(x):\n"
        "        try:\n"
        "            while True:\n"
        "                pass\n"
        "        except BaseException:\n"
        "            return x * n\n"
    )
    for n, body in enumerate((hangs, swallows)):
        started = time.monotonic()
        got = _graded(tmp_path, body + "    return key, []\n", f"cand_hang{n}", timeout=0.3)
        assert time.monotonic() - started < 15
        assert all(outcome["status"] == "timeout" for outcome in got.values())
        assert _reward(expected, got) == 0.0


def test_the_probes_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    source = "def make(words, n=0):\n    return lambda x: (x in words, len(words) + n)\n"
    words = {f"w{i}" for i in range(12)}
    seeds = ("1", "2")
    orders = printed_under_seeds("print(list({'w%d' % i for i in range(12)}))", seeds)
    assert orders[0] != orders[1]  # the seeds really change the set's iteration order
    runs = [
        run_runner(
            tmp_path,
            source,
            "make",
            [_blob([words], {"n": 1})],
            flags=("-P", "-s", "-S"),  # -I would ignore PYTHONHASHSEED
            env={"PYTHONHASHSEED": seed},
        ).outcome(0)
        for seed in seeds
    ]
    probes = [[probe["args"] for probe in run["value"]["v"]] for run in runs]
    assert probes[0] == probes[1]
    assert probes[0][:2] == [[encode(words)], [encode(1)]]  # the input's own values come first
    assert same_outcome(runs[0], runs[1]) and is_gradable(runs[0], SETTINGS)


def test_patched_builtins_and_types_do_not_change_the_probes(tmp_path: Path) -> None:
    expected = _graded(tmp_path, MAKER, "ref_patch")
    patches = (
        "import builtins, functools, types\n"
        "functools.partial = types.FunctionType = type(len)\n"
        "builtins.len = lambda x: 0\n"
        "builtins.isinstance = lambda *a: True\n"
        "builtins.sorted = lambda *a, **k: []\n"
        "builtins.any = lambda *a: True\n"
        "builtins.range = lambda *a: iter(())\n"
    )
    assert _reward(expected, _graded(tmp_path, patches + MAKER, "cand_patch")) == 1.0


def test_a_function_with_a_verified_name_stays_a_reference(tmp_path: Path) -> None:
    source = (
        "import functools\n"
        "def helper(x):\n    return x\n"
        "def make(n):\n"
        "    return len, helper, functools.partial(helper, n), lambda: n\n"
    )
    run = run_runner(tmp_path, source, "make", [_blob([5])], module="named")
    value = run.outcome(0)["value"]["v"]
    assert value[0] == {"t": "ref", "v": "builtins.len"}
    assert value[1] == {"t": "ref", "v": "named.helper"}
    assert value[2]["t"] == "partial" and value[2]["func"] == value[1]
    assert value[3] == {"t": wire.PROBED, "v": [{"t": wire.PROBE, "args": [], "v": encode(5)}]}
