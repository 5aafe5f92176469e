"""Train/test assignment by group (pure): `replicate export --split-by`.

Each task gets a group key (its file, its module's folder, or its repository); tasks whose
prompts show each other's hidden bodies (`visible_task_ids`) are merged into one group whatever
their keys, so no test row's answer is in a train row's prompt nor the other way round.  The
groups are taken in the order of the hashes of their keys (the smallest key among those merged,
salted by the seed), and each goes to `test` while it fits within the test ratio of the tasks,
else to `train`; when none fits, the smallest group is `test` (with two groups or more).  The
same batch and options give the same split; a group's place in the order depends on its key
alone, but a grown batch can move the ratio's cut: keep the test ids of an export whose test
side must stay held out.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

TRAIN = "train"
TEST = "test"


class SplitBy(StrEnum):
    """What a group of tasks kept on one side of the split is."""

    FILE = "file"
    MODULE = "module"  # the folder (package) the file is in
    REPOSITORY = "repository"


@dataclass(frozen=True)
class Placement:
    """Where one task went: its split and the key of its (merged) group."""

    split: str
    group: str


def group_key(by: SplitBy, repo: str, path: str) -> str:
    """The group key of a task in `repo` whose target is in the file `path`."""
    if by is SplitBy.REPOSITORY:
        return repo
    if by is SplitBy.MODULE:
        return f"{repo}:{posixpath.dirname(path) or '.'}/"
    return f"{repo}:{path}"


def bucket(key: str, seed: int) -> float:
    """A number in [0, 1) fixed by `key` and `seed`."""
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _merged(keys: Mapping[str, str], seen: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Each task's group after merging the groups of tasks that see each other: the smallest
    key of the merged group."""
    parent = {key: key for key in keys.values()}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    for task_id, others in seen.items():
        for other in others:
            if other in keys and task_id in keys:
                a, b = root(keys[task_id]), root(keys[other])
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {task_id: root(key) for task_id, key in keys.items()}


def assign(
    keys: Mapping[str, str], seen: Mapping[str, Sequence[str]], test_ratio: float, seed: int
) -> dict[str, Placement]:
    """Each task's placement: `keys` is its group key, `seen` the tasks its prompt shows."""
    groups = _merged(keys, seen)
    sizes: dict[str, int] = {}
    for group in groups.values():
        sizes[group] = sizes.get(group, 0) + 1
    order = sorted(sizes, key=lambda group: (bucket(group, seed), group))
    quota, taken = test_ratio * len(groups), 0
    test: set[str] = set()
    for group in order:
        if taken + sizes[group] <= quota:
            test.add(group)
            taken += sizes[group]
    if not test and test_ratio > 0 and len(order) > 1:
        test.add(min(order, key=lambda group: sizes[group]))
    return {
        task_id: Placement(TEST if group in test else TRAIN, group)
        for task_id, group in groups.items()
    }
