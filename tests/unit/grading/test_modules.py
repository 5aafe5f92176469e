"""A module task's `--repo-tests`: the test files that import the module, whole, then the tests
that called a member in no such file; and a module task is graded member by member."""

from __future__ import annotations

from pathlib import Path

from replicate.core import Span, Target
from replicate.grading.modules import importing_tests, imports_module, module_test_ids

SPAN = Span(start_byte=0, end_byte=1, start_line=1, end_line=1)


def _module(name: str, path: str) -> Target:
    return Target(
        path=path, module=name, qualname=name.rsplit(".", 1)[-1], kind="module", signature="",
        def_span=SPAN, body_span=SPAN, body_indent="", body_statements=1,
    )  # fmt: skip


def test_what_imports_a_module() -> None:
    for text in (
        "import pkg.shapes",
        "import pkg.shapes.sub as s",
        "from pkg.shapes import area",
        "from pkg import shapes",
        "from pkg import other, shapes as sh",
        "def test():\n    from pkg.shapes import area\n",
    ):
        assert imports_module(text.encode(), "pkg.shapes"), text
    for text in (
        "import pkg",
        "from pkg import other",
        "import pkg.shapesmore",
        "from . import shapes",
        "from .shapes import area",
        "def broken(:",
    ):
        assert not imports_module(text.encode(), "pkg.shapes"), text


def test_the_repo_tests_of_a_module_are_its_importing_test_files_then_the_callers(
    tmp_path: Path,
) -> None:
    files = {
        "pkg/shapes.py": "import math\n",
        "pkg/other.py": "from pkg import shapes\n",  # not a test file
        "tests/test_shapes.py": "from pkg.shapes import area\n",
        "tests/helpers.py": "import pkg.shapes\n",  # under tests/: a test file's helper
        "tests/test_other.py": "import pkg.other\n",
        "shapes_test.py": "from pkg import shapes\n",
        "docs/conf.py": "import pkg.shapes\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    target = _module("pkg.shapes", "pkg/shapes.py")
    found = importing_tests(tmp_path, "pkg.shapes", "pkg/shapes.py")
    assert found == ("shapes_test.py", "tests/helpers.py", "tests/test_shapes.py")
    callers = ("tests/test_shapes.py::test_area", "tests/test_other.py::test_uses_shapes")
    assert module_test_ids(tmp_path, target, callers, 200) == (
        *found, "tests/test_other.py::test_uses_shapes",
    )  # fmt: skip
    assert module_test_ids(tmp_path, target, callers, 2) == found[:2]
