"""Which repository modules a session imports before its children (`replicate.jail.preload`):
read from the import statements that run at import time, never the target's module or a module
that reaches it."""

from __future__ import annotations

from pathlib import Path

from replicate.jail.preload import preload_plan


def _tree(root: Path, files: dict[str, str]) -> str:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return str(root)


PACKAGE = {
    "pkg/__init__.py": (
        "from pkg.plain import A\n"
        "from pkg.target import f\n"
        "from pkg.uses_target import g\n"
        "from .relative import R\n"
        "from pkg import sub\n"
        "try:\n    from pkg.in_try import T\nexcept ImportError:\n    T = None\n"
    ),
    "pkg/plain.py": "import json\nA = 1\n",
    "pkg/target.py": "from pkg.plain import A\ndef f():\n    return A\n",
    "pkg/uses_target.py": "from pkg.via import V\ng = V\n",
    "pkg/via.py": "from pkg.target import f as V\n",
    "pkg/relative.py": "from . import plain\nR = plain.A\n",
    "pkg/sub/__init__.py": "from .leaf import L\n",
    "pkg/sub/leaf.py": "L = 3\n",
    "pkg/in_try.py": "T = 4\n",
    "pkg/lazy.py": "def h():\n    from pkg.target import f\n    return f\n",
    "pkg/never_imported.py": "X = 5\n",
}


def test_the_siblings_a_fresh_import_runs_that_do_not_reach_the_target(tmp_path: Path) -> None:
    root = _tree(tmp_path, PACKAGE)
    plan = preload_plan([root], "pkg.target")
    ours = ("pkg.plain", "pkg.relative", "pkg.sub", "pkg.sub.leaf", "pkg.in_try")
    assert plan == ("json", *ours)  # what they import from outside first
    # the target, its package's __init__, and what imports the target (even through another
    # module) are never in it; nor is a module no fresh import of the target runs
    assert not {"pkg", "pkg.target", "pkg.uses_target", "pkg.via", "pkg.never_imported"} & set(plan)


def test_an_import_inside_a_function_does_not_count(tmp_path: Path) -> None:
    files = {**PACKAGE, "pkg/__init__.py": "from pkg.lazy import h\nfrom pkg.target import f\n"}
    # pkg.plain: the target's own import
    assert preload_plan([_tree(tmp_path, files)], "pkg.target") == ("json", "pkg.lazy", "pkg.plain")
    eager = {**files, "pkg/lazy.py": "from pkg.target import f\n"}  # the control
    assert preload_plan([_tree(tmp_path / "eager", eager)], "pkg.target") == ("json", "pkg.plain")


def test_a_module_that_does_not_parse_is_not_preloaded_nor_what_imports_it(
    tmp_path: Path,
) -> None:
    files = {
        "pkg/__init__.py": "from pkg.broken import B\nfrom pkg.user import U\nimport pkg.target\n",
        "pkg/broken.py": "def (:\n",
        "pkg/user.py": "from pkg.broken import B as U\n",
        "pkg/target.py": "def f():\n    return 1\n",
    }
    assert preload_plan([_tree(tmp_path, files)], "pkg.target") == ()


def test_the_first_root_that_holds_a_module_is_the_one_read(tmp_path: Path) -> None:
    first = _tree(tmp_path / "a", {"pkg/__init__.py": "import pkg.one\nimport pkg.target\n"})
    _tree(tmp_path / "a", {"pkg/one.py": "X = 1\n", "pkg/target.py": "def f():\n    pass\n"})
    second = _tree(tmp_path / "b", {"pkg/__init__.py": "import pkg.two\nimport pkg.target\n"})
    _tree(tmp_path / "b", {"pkg/two.py": "X = 2\n"})
    assert preload_plan([first, second], "pkg.target") == ("pkg.one",)


def test_modules_from_outside_are_named_as_the_statements_name_them(tmp_path: Path) -> None:
    """The standard library's and installed packages' modules the fresh import runs (the
    target's own module-level imports among them: they are in the file the agent sees)."""
    files = {
        "pkg/__init__.py": "import pkg.target\n",
        "pkg/target.py": (
            "import xml.etree.ElementTree as ET\n"
            "from collections import deque\n"
            "def f():\n    import heapq\n    return deque()\n"
        ),
    }
    assert preload_plan([_tree(tmp_path, files)], "pkg.target") == (
        "xml.etree.ElementTree",
        "collections",  # not collections.deque: a name, not a module
    )  # heapq: imported only when f runs


def test_nothing_for_a_target_outside_the_roots(tmp_path: Path) -> None:
    root = _tree(tmp_path, PACKAGE)
    assert preload_plan([root], "elsewhere.target") == ()
