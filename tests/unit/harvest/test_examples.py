"""Which documentation the harvest hands pytest as doctests (`harvest/documented.py`), and how
prompt-less code examples become doctest files (`harvest/examples.py`): read, never run."""

from __future__ import annotations

import doctest
from pathlib import Path

from replicate.harvest.declared import DeclaredPath
from replicate.harvest.documented import (
    SOURCE,
    doctest_options,
    documented_examples,
    from_documentation,
)
from replicate.harvest.examples import (
    DOCSTRING_SOURCE,
    as_doctest,
    example_files,
    fenced_blocks,
    literal_blocks,
)

DOCSTRING = '''
class Tree:
    """A tree.

    Example:
        Building one::

            tree = Tree()
            tree.add("root")
            for name in ("a", "b"):
                tree.add(name)

        Shell, not Python::

            $ pip install tree
    """

    def add(self, name):
        """>>> Tree().add("x")"""
'''


def _library(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tree.py").write_text(DOCSTRING)
    (tmp_path / "README.md").write_text("Use it:\n\n```python\nimport pkg\npkg.go(1)\n```\n")
    (tmp_path / "API.md").write_text("```python\n>>> from pkg import go\n>>> go(2)\n3\n```\n")
    (tmp_path / "CHANGES.rst").write_text("1.0: first\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "usage.rst").write_text(".. code-block:: python\n\n    pkg.go(3)\n")
    return tmp_path


def test_documentation_with_prompts_is_found(tmp_path: Path) -> None:
    found = documented_examples(_library(tmp_path))
    assert found == (DeclaredPath("API.md", SOURCE),)
    options = doctest_options(found)
    assert "--doctest-continue-on-failure" in options
    assert "--doctest-glob=API.md" in options and "--doctest-glob=test*.txt" in options
    assert doctest_options([DeclaredPath("test.py", "a root-level test module")]) == ()


def test_a_documentation_node_is_no_repository_test() -> None:
    assert from_documentation("API.md::API.md")
    assert from_documentation(".replicate-examples/pkg__tree.py.txt::pkg__tree.py.txt")
    assert not from_documentation("tests/test_tree.py::test_add")
    assert not from_documentation("tests/test_usage.txt::test_usage.txt")


def test_literal_blocks_and_fences_are_read() -> None:
    blocks = literal_blocks(DOCSTRING.split('"""')[1].replace("\n    ", "\n"))
    assert blocks[0].startswith("tree = Tree()") and "$ pip install tree" in blocks[1]
    assert fenced_blocks("```python\nx = 1\n```\n```bash\nls\n```\n") == ["x = 1"]


def test_code_becomes_doctest_examples_that_parse() -> None:
    text = as_doctest(
        ["tree = Tree()\nfor n in 'ab':\n    tree.add(n)", "$ pip install"], ["import pkg"]
    )
    assert text.splitlines() == [
        ">>> import pkg",
        ">>> tree = Tree()",
        ">>> for n in 'ab':",
        "...     tree.add(n)",
        "...",
    ]
    parsed = doctest.DocTestParser().get_examples(text)
    assert [e.source.strip() for e in parsed][1:2] == ["tree = Tree()"]
    assert as_doctest(["$ pip install"], ["import pkg"]) == ""  # nothing but the preamble


def test_example_files_of_a_library(tmp_path: Path) -> None:
    files = {f.path: f for f in example_files(_library(tmp_path), ["."])}
    tree = files[".replicate-examples/pkg__tree.py.txt"]
    assert tree.source == DOCSTRING_SOURCE
    assert tree.text.startswith(">>> import pkg.tree\n>>> from pkg.tree import *\n")
    assert '>>> tree.add("root")' in tree.text and "pip install" not in tree.text
    assert ">>> pkg.go(1)" in files[".replicate-examples/README.md.txt"].text
    assert ">>> pkg.go(3)" in files[".replicate-examples/docs__usage.rst.txt"].text
    assert not any("API.md" in path for path in files)  # prompts: doctest reads it itself


def test_one_line_of_two_statements_is_written_once() -> None:
    assert as_doctest(["a = 1; b = 2", "a + b"], []).splitlines() == [
        ">>> a = 1; b = 2",
        ">>> a + b",
    ]


def test_only_the_library_s_modules_are_read(tmp_path: Path) -> None:
    root = _library(tmp_path)
    venv = root / "venv" / "lib" / "python3" / "other"  # no __init__.py on the way down
    venv.mkdir(parents=True)
    (venv / "__init__.py").write_text(DOCSTRING)  # an installed package, not the library
    (root / "pkg" / "tests").mkdir()
    (root / "pkg" / "tests" / "__init__.py").write_text("")
    (root / "pkg" / "tests" / "test_tree.py").write_text(DOCSTRING)
    (root / "script.py").write_text(DOCSTRING)  # a root module beside a package: read, as
    paths = [f.path for f in example_files(root, ["."])]  # extraction reads it, not imported
    assert ".replicate-examples/pkg__tree.py.txt" in paths
    assert not any("venv" in p or "tests" in p for p in paths), paths
    readme = next(f for f in example_files(root, ["."]) if f.path.endswith("README.md.txt"))
    assert readme.text.startswith(">>> import pkg\n>>> import pkg\n")  # its package alone
