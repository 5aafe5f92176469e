"""Each package's `__init__` is its public face: code outside a package imports what the face
re-exports (`__all__`), never a name from one of its modules. Inside a package, modules import
each other directly. A module named here is left out of its package's face on purpose: it is
imported only when chosen, because importing it costs (openai) or it is a registry's backend."""

from __future__ import annotations

import ast
from pathlib import Path

import replicate

ROOT = Path(replicate.__file__).resolve().parent
LOADED_WHEN_CHOSEN = {
    "replicate.cli.main",  # the console script's entry point
    "replicate.integrations.inspect_task",  # imports inspect_ai; a trainer imports it by path
    "replicate.agents.llm_agent",  # imports openai
    # also a script (`python -m ...`): the face importing it first would make runpy warn
    "replicate.sandbox.docker_image",
    "replicate.sandbox.process",  # a backend's part: a session loads it when it starts one
    "replicate.executors.local",
    "replicate.executors.ray_cluster",  # imports ray
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    path = ROOT.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def face_breaches(root: Path) -> list[str]:
    """`file:line: module` for every import that reaches past another package's face."""
    found = []
    for path in sorted(root.rglob("*.py")):
        mine = ["replicate", path.relative_to(root).parts[0].removesuffix(".py")]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
                continue
            parts = node.module.split(".")
            if parts[0] != "replicate" or len(parts) < 3 or parts[:2] == mine:
                continue
            if not (ROOT / parts[1]).is_dir() or node.module in LOADED_WHEN_CHOSEN:
                continue
            if all(_is_module(f"{node.module}.{alias.name}") for alias in node.names):
                continue  # `from replicate.jail import wire`: a module, through its package
            found.append(f"{path.relative_to(root)}:{node.lineno}: {node.module}")
    return found


def test_code_outside_a_package_imports_its_face() -> None:
    assert face_breaches(ROOT) == []


def test_an_import_past_a_face_is_found(tmp_path: Path) -> None:
    """Positive control: a module planted outside `jail/` that imports from `jail.calls`."""
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from replicate.jail.calls import run_calls\nfrom replicate.jail import wire\n"
    )
    assert face_breaches(tmp_path) == ["planted.py:1: replicate.jail.calls"]


def test_every_face_exports_what_it_names() -> None:
    for init in sorted(ROOT.glob("*/__init__.py")):
        module = __import__(_module_name(init), fromlist=["__all__"])
        for name in getattr(module, "__all__", ()):
            assert hasattr(module, name), f"{init}: __all__ names {name} but it is not there"


def bare_faces(root: Path) -> list[str]:
    """Faces whose docstring does not say the package's concern: missing, or just its name."""
    found = []
    for init in sorted(root.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        words = doc.strip().rstrip(".").split()
        if len(words) < 4 or doc.strip().rstrip(".").lower() == init.parent.name.lower():
            found.append(str(init.relative_to(root)))
    return found


def test_every_face_names_its_concern() -> None:
    assert bare_faces(ROOT) == []


def test_a_bare_name_face_is_found(tmp_path: Path) -> None:
    """Positive control: a package whose face says only its own name."""
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "__init__.py").write_text('"""gen."""\n')
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "__init__.py").write_text('"""Minting tasks from one repository."""\n')
    assert bare_faces(tmp_path) == ["gen/__init__.py"]
