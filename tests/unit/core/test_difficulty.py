"""Difficulty features over source text, and the band they give."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from replicate.core.copying import Copy
from replicate.core.difficulty import COPIED, POINTS, _repo_calls, _repo_names, band, measure
from replicate.core.records import Target
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
'''


@pytest.fixture
def targets(tmp_path: Path) -> dict[str, Target]:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "web.py").write_text(MODULE)
    return {t.name: t for t in PythonLanguage().discover(tmp_path).targets}


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
        ({"body_lines": 30, "complexity": 4}, "medium"),  # three: lines count twice too
        ({"body_lines": 30, "complexity": 4, "statements": 5}, "hard"),
        ({"complexity": 3, "statements": 4, "body_lines": 11, "repo_calls": 1}, "easy"),
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
