"""Difficulty features over source text, and the band they give."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from replicate.core.copying import Copy
from replicate.core.difficulty import (
    COPIED,
    KIND_ORDER,
    POINTS,
    _repo_calls,
    _repo_names,
    band,
    curriculum_key,
    measure,
)
from replicate.core.records import Target, TaskKind
from replicate.languages.python import PythonLanguage

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

MODULE = '''
def clamp(value, low, high):
    """Clamp value into [low, high]."""
    if low > high:
        raise ValueError("empty range")
    return low if value < low else min(value, high)


def route(request, table):
    """Branchy, long and leaning on the module."""
    method = request.method.upper()
    path = request.path.rstrip("/") or "/"
    handler = None
    for pattern, view in table:
        if pattern == path or (pattern.endswith("*") and path.startswith(pattern[:-1])):
            handler = view
            break
    if handler is None:
        return not_found(request)
    if method not in ("GET", "POST", "PUT", "DELETE"):
        return refuse(request, method)
    try:
        response = handler(request)
    except KeyError as exc:
        response = not_found(request, str(exc))
    except ValueError:
        response = refuse(request, method)
    if response.status >= 500 and request.retries < 3:
        response = route(request.again(), table)
    elif response.status == 304:
        response = response.cached()
    headers = dict(response.headers)
    headers.setdefault("content-type", "text/plain")
    return response.with_headers(headers)


def not_found(request, why=""):
    return why


def refuse(request, method):
    return method


class Cache:
    """A cache that evicts its oldest key."""

    def __init__(self, size):
        self.size = size
        self.data = {}

    def get(self, key):
        return self.data.get(key)

    def put(self, key, value):
        self.data[key] = value
        if len(self.data) > self.size:
            self.evict()
        return self.get(key)

    def evict(self):
        oldest = next(iter(self.data))
        del self.data[oldest]
        return Cache.evict_count(self)

    @staticmethod
    def evict_count(cache):
        return cache.size - len(cache.data)
'''


@pytest.fixture
def targets(tmp_path: Path) -> dict[str, Target]:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "web.py").write_text(MODULE)
    found = PythonLanguage().discover(tmp_path)
    return {t.name: t for t in found.targets + found.classes}


def test_a_small_function_is_easy(targets: dict[str, Target]) -> None:
    found = measure(MODULE, targets["clamp"], {"traced": 4, "edge": 2}, 0.9)
    assert (found.complexity, found.statements, found.body_lines, found.repo_calls) == (3, 2, 3, 0)
    assert found.strata == (("traced", 4), ("widened", 0), ("edge", 2), ("raises", 0))
    assert found.kill_rate == 0.9 and found.band == "easy"


def test_a_long_branchy_function_that_calls_its_module_is_hard(
    targets: dict[str, Target],
) -> None:
    found = measure(MODULE, targets["route"], {}, None)
    assert found.complexity >= 8 and found.statements >= 5 and found.body_lines >= 12
    assert found.repo_calls == 5  # not_found twice, refuse twice, route once
    assert found.band == "hard"


def test_a_copied_body_is_one_band_easier(targets: dict[str, Target]) -> None:
    copied = measure(MODULE, targets["route"], {}, None, Copy(COPIED, "pkg/other.py:1 route"))
    assert copied.band == "medium" and copied.copy_of == "pkg/other.py:1 route"
    below = measure(MODULE, targets["route"], {}, None, Copy(COPIED - 0.01, "x"))
    assert below.band == "hard"


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        ({}, "easy"),
        ({"complexity": 4}, "easy"),  # one point
        ({"complexity": 4, "statements": 5}, "medium"),  # two
        ({"complexity": 8, "statements": 5}, "medium"),  # three (complexity counts twice)
        ({"complexity": 8, "statements": 5, "repo_calls": 2}, "hard"),  # four
        ({"lines_hidden": 30, "complexity": 4}, "medium"),  # three: lines count twice too
        ({"lines_hidden": 30, "complexity": 4, "statements": 5}, "hard"),
        ({"complexity": 3, "statements": 4, "lines_hidden": 11, "repo_calls": 1}, "easy"),
        ({"lines_hidden": 80}, "medium"),  # three: a long body's size point
        ({"members": 2, "complexity": 4}, "medium"),  # two: a class's members count
        ({"members": 6, "member_calls": 2, "sequence_steps": 8}, "hard"),  # four size points
        ({"members": 1, "member_calls": 1, "sequence_steps": 7}, "easy"),  # below each
    ],
)
def test_bands_follow_the_documented_points(features: dict[str, int], expected: str) -> None:
    assert band(features, 0.0) == expected
    easier = {"easy": "easy", "medium": "easy", "hard": "medium"}[expected]
    assert band(features, COPIED) == easier


def test_every_point_is_a_feature_the_record_has() -> None:
    from replicate.core.difficulty import Difficulty

    assert {name for name, _ in POINTS} <= set(Difficulty.model_fields)


def test_calls_into_the_repository_are_told_from_the_rest() -> None:
    module = ast.parse(SOURCE)
    names = _repo_names(module, "mypkg.things")
    assert names == {"local", "Thing", "helpers", "slug", "util"}
    method = module.body[-1].body[0]  # type: ignore[attr-defined]
    # local, helpers.one, slug, util.two, self.other: not os.path.join, OrderedDict, len, cls_free
    assert _repo_calls(method, names) == 5


def test_a_function_has_one_member_and_no_size_points(targets: dict[str, Target]) -> None:
    found = measure(MODULE, targets["route"], {}, None)
    assert found.kind is TaskKind.FUNCTION and found.members == 1 and found.member_calls == 0
    assert found.lines_hidden == found.body_lines and found.sequence_steps is None
    unsized = {"complexity": found.complexity, "statements": found.statements}
    unsized |= {"lines_hidden": found.body_lines, "repo_calls": found.repo_calls}
    assert found.points == sum(unsized[name] >= least for name, least in POINTS[:6])
    assert found.band == "hard"


def test_a_class_is_measured_by_its_members_and_the_calls_between_them(
    targets: dict[str, Target],
) -> None:
    cache = targets["Cache"]
    assert cache.task_kind is TaskKind.CLASS
    found = measure(MODULE, cache, {}, None)
    assert found.kind is TaskKind.CLASS and found.members == 5
    # put -> evict, put -> get, evict -> Cache.evict_count; not `self.data.get` nor len(...)
    assert found.member_calls == 3
    assert found.lines_hidden == sum(
        m.body_span.end_line - m.body_span.start_line + 1 for m in cache.members
    )
    assert found.lines_hidden < found.body_lines  # the members' def lines are not hidden
    assert found.sequence_steps is None
    longer = measure(MODULE, cache, {}, None, sequence_steps=(3, 9, 12))
    assert longer.sequence_steps == 9 and longer.points == found.points + 1
    # the class earns more than any one of its members, whatever its kind sorts it after
    members = [measure(MODULE, m, {}, None) for m in cache.members]
    assert all(found.points > m.points for m in members)


def test_the_curriculum_goes_by_kind_then_points(targets: dict[str, Target]) -> None:
    assert KIND_ORDER == (TaskKind.FUNCTION, TaskKind.METHOD, TaskKind.CLASS, TaskKind.MODULE)
    found = [measure(MODULE, t, {}, None) for t in targets.values()]
    ordered = sorted(found, key=curriculum_key)
    kinds = [d.kind for d in ordered]
    assert kinds == sorted(kinds, key=KIND_ORDER.index)
    assert {TaskKind.FUNCTION, TaskKind.METHOD, TaskKind.CLASS} <= set(kinds)
    route = measure(MODULE, targets["route"], {}, None)  # hard, yet before the class
    assert route.points > ordered[-1].points - 2 and ordered[-1].kind is TaskKind.CLASS
    assert curriculum_key(route) < curriculum_key(ordered[-1])
