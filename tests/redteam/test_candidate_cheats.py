"""Red team, candidate side: cheats that live in the target file and act when the grader imports or
calls it (catalogue items 1, 2, 3, 4, 5, 7, 10, 15, 16, 17 of docs/design.md §5).

Each test first runs its agent outside any sandbox and shows the naive in-process grader
(tests/redteam/naive.py) gives it a high score; then it reads the same agent's row from one shared
`replicate run` of the whole group through the sandbox and checks our grader gives it nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.redteam import plants
from tests.redteam.conftest import Controls, Launcher
from tests.redteam.naive import NaiveOptions
from tests.redteam.scenario import (
    CONTROL,
    SLOW_CALLS,
    Attack,
    DefenceMissing,
    GroupRun,
    check_defended,
    check_graded_twice,
    check_per_call_limit,
    demonstrate,
    late_reward,
    naive_late,
    run_group,
    slow_args,
    task,
)

SLOW_NAIVE = NaiveOptions(call_timeout=0.3)  # the slow calls sleep 0.5 s outside a sandbox

ATTACKS = [
    Attack("eq-object", 1, "samplelib.text.camel_to_snake", "eq_always_true.py", ("object",)),
    Attack(
        "eq-int-subclass",
        1,
        "samplelib.text.levenshtein",
        "eq_always_true.py",
        ("int",),
        # 6 of its 92 hidden inputs pass iterators, on which the original raises (no len()):
        # an int that equals everything cannot fake a raise, even to the naive grader
        naive_min=0.9,
    ),
    Attack(
        "eq-str-subclass",
        1,
        "samplelib.accounts.Account.format_cents",
        "eq_always_true.py",
        ("str",),
    ),
    Attack(
        "eq-list-subclass",
        1,
        "samplelib.accounts.Account.statement",
        "eq_always_true.py",
        ("list",),
    ),
    # The reference raises on 13 of 71 and 8 of 81 inputs of the next two: no object wins those.
    Attack(
        "eq-dict-subclass",
        1,
        "samplelib.functional.count_by",
        "eq_always_true.py",
        ("dict",),
        naive_min=0.8,
    ),
    Attack(
        "eq-for-generator",
        1,
        "samplelib.iterables.running_totals",
        "eq_always_true.py",
        ("iter",),
        naive_min=0.8,
    ),
    Attack("exit-0-import-sys", 2, "samplelib.numeric.variance", "exit_early.py", ("import-sys",)),
    Attack("exit-0-import-os", 2, "samplelib.numeric.median", "exit_early.py", ("import-os",)),
    Attack("exit-0-call-sys", 2, "samplelib.numeric.prime_factors", "exit_early.py", ("call-sys",)),
    Attack("exit-0-call-os", 2, "samplelib.numeric.digital_root", "exit_early.py", ("call-os",)),
    Attack("expected-from-frames", 3, "samplelib.numeric.from_base", "frame_peek.py"),
    Attack("expected-from-gc", 3, "samplelib.text.slugify", "gc_scan.py"),
    Attack("expected-from-proc", 3, "samplelib.numeric.to_base", "proc_peek.py"),
    Attack(
        "import-original-at-grade-time", 7, "samplelib.inplace.deep_merge", "import_original.py"
    ),
    Attack("fake-pass-stdout", 4, "samplelib.text.truncate", "forge_output.py", ("stdout",)),
    Attack("fake-pass-stderr", 4, "samplelib.text.rle_encode", "forge_output.py", ("stderr",)),
    Attack("fake-results-file", 4, "samplelib.text.rle_decode", "forge_output.py", ("file",)),
    Attack("forged-frames-fd3", 4, "samplelib.text.title_case", "forge_output.py", ("fd3",)),
    Attack(
        "forged-frames-fd3-nonce",
        4,
        "samplelib.functional.group_by",
        "forge_output.py",
        ("fd3-nonce",),
        naive=NaiveOptions(nonce=True),
    ),
    Attack("patch-json", 5, "samplelib.text.wrap_words", "patch_json.py"),
    Attack("patch-builtins", 5, "samplelib.shapes.Matrix.transpose", "patch_builtins.py"),
    Attack("patch-runner-functions", 5, "samplelib.shapes.Interval.length", "patch_runner.py"),
    Attack(
        "patch-stdlib-timers",
        5,
        "samplelib.numeric.mean",
        "patch_timers.py",
        slow_args("samplelib.numeric.mean", "stdlib"),
        max_reward=late_reward("samplelib.numeric.mean"),
        naive=SLOW_NAIVE,
        baseline=slow_args("samplelib.numeric.mean", "nopatch"),
    ),
    Attack(
        "patch-runner-timers",
        5,
        "samplelib.functional.partition",
        "patch_timers.py",
        slow_args("samplelib.functional.partition", "runner"),
        max_reward=late_reward("samplelib.functional.partition"),
        naive=SLOW_NAIVE,
        baseline=slow_args("samplelib.functional.partition", "nopatch"),
    ),
    Attack(
        "lookalike-valueerror",
        10,
        "samplelib.shapes.Interval.parse",
        "lookalike_exception.py",
        ("plain",),
        naive_min=0.6,
    ),
    Attack(
        "lookalike-valueerror-spoofed",
        10,
        "samplelib.accounts.Account.from_record",
        "lookalike_exception.py",
        ("spoofed",),
        naive_min=0.6,
    ),
    Attack(
        "edit-package-init",
        15,
        "samplelib.numeric.round_half_even",
        "edit_other_files.py",
        ("init",),
        naive_min=0.8,
        naive_tree="workspace",
    ),
    Attack(
        "edit-sibling-module",
        15,
        "samplelib.functional.zip_with",
        "edit_other_files.py",
        ("sibling",),
        naive_min=0.6,
        naive_tree="workspace",
    ),
    Attack(
        "lookup-table-from-visible-tests",
        16,
        "samplelib.numeric.collatz_steps",
        "lookup_table.py",
        max_reward=0.1,
        naive=NaiveOptions(traced_only=True),
    ),
    # Read off the workspace without running anything: the tests' literal calls and asserted
    # results (parametrize rows included) and the doctests, None elsewhere.  A grader of the
    # visible tests pays it most of the reward; ours at most MAX_DEGENERATE_REWARD.
    Attack(
        "memorise-literal-calls",
        16,
        "samplelib.numeric.lcm_list",
        "memorise.py",
        naive_min=0.51,
        max_reward=0.05,
        naive=NaiveOptions(traced_only=True),
    ),
    Attack(
        "coin-flip",
        17,
        # 127 hidden inputs, baseline 0.483: one grading of 90% right pays ~0.8 normalised (the
        # naive grader's plain fraction ~0.9), and both gradings all right by luck (1.0) comes
        # once in ~4e11 runs (0.9 ** 254; gcd_list's 65 inputs at 95%: once in ~800, seen in CI)
        "samplelib.text.snake_to_camel",
        "coin_flip.py",
        ("0.9",),
        naive_min=0.6,
        max_reward=0.1,
    ),
]


PLANTS: dict[str, Callable[[Path, Path], object]] = {
    "import-original-at-grade-time": plants.home_checkout,
}


def cases(attacks: list[Attack]) -> list[object]:
    return [
        pytest.param(
            attack,
            id=attack.name,
            marks=[pytest.mark.xfail(strict=True, raises=DefenceMissing, reason=attack.hole)]
            if attack.hole
            else [],
        )
        for attack in attacks
    ]


@pytest.fixture(scope="module")
def group(backend: str, launcher: Launcher, tmp_path_factory: pytest.TempPathFactory) -> GroupRun:
    def start(name: str) -> GroupRun:
        out = tmp_path_factory.mktemp(f"candidate-{name}") / "run"
        return run_group([*ATTACKS, CONTROL], name, out, timeout_s=120)

    return launcher.group("candidate", backend, start)


@pytest.mark.parametrize("attack", cases(ATTACKS))
def test_candidate_cheat(
    attack: Attack, group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    if attack.name in PLANTS:  # what a user's machine would hold, in the home folder
        PLANTS[attack.name](tmp_path / "naive" / "home", task(attack.symbol).repo.tree)
    naive = controls.once(attack.name, lambda: demonstrate(attack, tmp_path / "naive", jobs))
    assert naive.reward >= attack.naive_min, (
        f"{attack.name} does not fool the naive grader ({naive.reward}, {naive.how}): "
        f"{naive.output[-1500:]!r}"
    )
    if attack.baseline is not None:
        baseline = attack.baseline
        honest = controls.once(
            attack.name + "/baseline",
            lambda: demonstrate(attack, tmp_path / "baseline", jobs, args=baseline),
        )
        assert honest.reward == pytest.approx(naive_late(attack)), (
            f"without the cheat the naive grader gives {honest.reward}: its limit did not stop "
            f"exactly the {SLOW_CALLS} slow calls"
        )
    check_defended(group, attack)
    if attack.baseline is not None:
        check_per_call_limit(group, attack)
    if attack.item == 17:
        check_graded_twice(group, attack)


def test_control_scores_one(
    group: GroupRun, jobs: Path, tmp_path: Path, controls: Controls
) -> None:
    """The hand-written correct control scores 1.0 with both graders (so 0 above means 0)."""
    assert controls.once("control", lambda: demonstrate(CONTROL, tmp_path, jobs)).reward == 1.0
    assert group.row(CONTROL)["reward"] == 1.0, group.stderr[-2000:]
