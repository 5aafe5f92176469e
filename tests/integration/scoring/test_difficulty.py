"""Difficulty per task, from what the batch holds (shown by `replicate report`)."""

from __future__ import annotations

import ast

from replicate.scoring.difficulty import _repo_calls, _repo_names, difficulty
from tests.integration.minted import Tiny

SOURCE = """
import os
import mypkg.util as util
from . import helpers
from mypkg.text import slug
from collections import OrderedDict

def local(x):
    return x

class Thing:
    def method(self, x):
        y = local(x) + helpers.one(x) + slug(x) + util.two(x) + self.other(x)
        return os.path.join(OrderedDict(), len(y), cls_free(y))
"""


def test_difficulty_of_the_tiny_tasks(tiny: Tiny) -> None:
    found = {s: difficulty(tiny.task(s)) for s in ("tinypkg.core.clamp", "tinypkg.core.parse_int")}
    clamp, parse = found["tinypkg.core.clamp"], found["tinypkg.core.parse_int"]
    assert clamp.complexity == 3  # two ifs
    assert parse.complexity == 3  # one if, one `or`
    assert (clamp.statements, clamp.body_lines) == (3, 5)  # if, if, return on five lines
    assert clamp.repo_calls == 0
    for symbol, one in found.items():
        task = tiny.task(symbol)
        assert sum(n for _, n in one.strata) == len(task.inputs)
        assert [name for name, _ in one.strata] == ["traced", "widened", "edge", "raises"]
        strength = task.hidden.strength
        assert one.kill_rate == (strength.kill_rate if strength else None)


def test_calls_into_the_repository_are_told_from_the_rest() -> None:
    module = ast.parse(SOURCE)
    names = _repo_names(module, "mypkg.things")
    assert names == {"local", "Thing", "helpers", "slug", "util"}
    method = module.body[-1].body[0]  # type: ignore[attr-defined]
    # local, helpers.one, slug, util.two, self.other: not os.path.join, OrderedDict, len, cls_free
    assert _repo_calls(method, names) == 5
