"""`--split-by`: tasks that see each other stay on one side; the ratio is kept; same input, same
split."""

from __future__ import annotations

from replicate.core.splits import TEST, TRAIN, SplitBy, assign, group_key


def test_group_keys() -> None:
    assert group_key(SplitBy.FILE, "r", "pkg/a.py") == "r:pkg/a.py"
    assert group_key(SplitBy.MODULE, "r", "pkg/a.py") == group_key(SplitBy.MODULE, "r", "pkg/b.py")
    assert group_key(SplitBy.MODULE, "r", "top.py") == "r:./"
    assert group_key(SplitBy.REPOSITORY, "r", "pkg/a.py") == "r"


def keys(files: int, per_file: int) -> dict[str, str]:
    return {f"f{f}-t{t}": f"r:f{f}.py" for f in range(files) for t in range(per_file)}


def test_a_group_stays_together_and_the_ratio_is_kept() -> None:
    tasks = keys(20, 5)
    placed = assign(tasks, {}, 0.2, seed=0)
    for task_id, place in placed.items():
        assert place.group == tasks[task_id]
        same = [p.split for t, p in placed.items() if tasks[t] == tasks[task_id]]
        assert set(same) == {place.split}
    assert sum(p.split == TEST for p in placed.values()) == 20
    assert assign(tasks, {}, 0.2, seed=0) == placed  # deterministic
    assert assign(tasks, {}, 0.2, seed=1) != placed  # the seed reshuffles


def test_tasks_that_see_each_other_are_merged_across_groups() -> None:
    tasks = keys(20, 1)
    seen = {"f0-t0": ["f1-t0"], "f1-t0": ["f2-t0"], "f9-t0": ["not-exported"]}
    for seed in range(10):
        placed = assign(tasks, seen, 0.5, seed=seed)
        assert len({placed[t].split for t in ("f0-t0", "f1-t0", "f2-t0")}) == 1
        assert placed["f2-t0"].group == "r:f0.py"  # the smallest key names the merged group
    # the control: without the edges the three land apart for some seed
    apart = [assign(tasks, {}, 0.5, seed=s) for s in range(10)]
    assert any(len({p[t].split for t in ("f0-t0", "f1-t0", "f2-t0")}) == 2 for p in apart)


def test_a_small_batch_still_gets_a_test_side_and_the_ends_hold() -> None:
    tasks = {"a": "r:a.py", "b": "r:a.py", "c": "r:b.py"}
    placed = assign(tasks, {}, 0.1, seed=0)  # 0.1 of 3 tasks: no group fits; the smallest does
    assert placed["c"].split == TEST and placed["a"].split == placed["b"].split == TRAIN
    assert {p.split for p in assign(tasks, {}, 0.0, seed=0).values()} == {TRAIN}
    assert {p.split for p in assign(tasks, {}, 1.0, seed=0).values()} == {TEST}
    assert {p.split for p in assign({"a": "r:a.py"}, {}, 0.5, seed=0).values()} == {TRAIN}
