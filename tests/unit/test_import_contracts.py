"""The import contracts of the files that run inside the sandbox, and of the sandboxes themselves
(pyproject.toml, import-linter).

The runner, the wire it loads, the harvest's shipped files and the egress relay run with the
repository's interpreter, where neither ``replicate`` nor any of its dependencies is installed.
`lint-imports` holds them to that; these tests keep its list of third-party packages equal to the
project's dependencies and show each contract failing on a planted import in a copy of the tree.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]
THIRD_PARTY = "the files shipped into the sandbox import no third-party package"
RUNNER = "the in-jail runner imports nothing of replicate but the wire"
HARVEST = "the harvest's shipped files import only each other"
RELAY = "the egress relay imports nothing of replicate"
SANDBOX = "the sandboxes know nothing of jails, runners or tasks"

# one planted import per contract: (file in the copy, line, the import the contract names)
PLANTED = {
    THIRD_PARTY: ("replicate/jail/runner/naming.py", "import docker", "docker"),
    RUNNER: (
        "replicate/jail/runner/probes.py",
        "from replicate.core import records",
        "replicate.core.records",
    ),
    HARVEST: (
        "replicate/harvest/budget.py",
        "from replicate.harvest import detail",
        "replicate.harvest.detail",
    ),
    RELAY: ("replicate/agents/egress_relay.py", "import replicate.errors", "replicate.errors"),
    SANDBOX: (
        "replicate/sandbox/plain.py",
        "from replicate.core import records",
        "replicate.core.records",
    ),
}


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _contract(name: str) -> dict[str, Any]:
    contracts = _pyproject()["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["name"] == name)


def _dependency_modules() -> set[str]:
    """The top-level modules of every distribution pyproject names (runtime and extras)."""
    project = _pyproject()["project"]
    specs = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        specs.extend(extra)
    wanted = {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0] for spec in specs}
    normal = {re.sub(r"[-_.]+", "-", name).lower() for name in wanted}
    modules: set[str] = set()
    found: set[str] = set()
    for module, dists in importlib.metadata.packages_distributions().items():
        for dist in dists:
            key = re.sub(r"[-_.]+", "-", dist).lower()
            if key in normal:
                found.add(key)
                public = module.isidentifier() and not module.startswith("_")
                if public or module == "_pytest":
                    modules.add(module)
    assert found == normal, f"not installed, so not checked: {sorted(normal - found)}"
    return modules


def test_every_dependency_is_forbidden_to_the_shipped_files() -> None:
    forbidden = set(_contract(THIRD_PARTY)["forbidden_modules"])
    assert _dependency_modules() <= forbidden, sorted(_dependency_modules() - forbidden)


def test_the_third_party_contract_covers_every_shipped_file() -> None:
    shipped = {m for name in (RUNNER, HARVEST, RELAY) for m in _contract(name)["source_modules"]}
    assert set(_contract(THIRD_PARTY)["source_modules"]) == shipped


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    shutil.copytree(
        ROOT / "replicate", tree / "replicate", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def _lint(tree: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> int:
    """`lint-imports` on the copy, in this process: the copy's `replicate` found first."""
    for name in [n for n in sys.modules if n == "replicate" or n.startswith("replicate.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(tree))
    monkeypatch.chdir(tree)
    capsys.readouterr()
    return lint_imports(config_filename="pyproject.toml", no_cache=True, no_logo=True)


def _verdicts(output: str) -> dict[str, str]:
    names = tuple(PLANTED)
    found = {}
    for line in output.splitlines():
        for name in names:
            if line.startswith(name + " "):
                found[name] = "BROKEN" if "BROKEN" in line else "KEPT"
    return found


def test_the_copy_of_the_tree_keeps_every_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _lint(_copy(tmp_path), monkeypatch, capsys)
    output = capsys.readouterr().out
    assert code == 0, output
    assert _verdicts(output) == dict.fromkeys(PLANTED, "KEPT"), output


def test_a_planted_import_breaks_its_contract(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tree = _copy(tmp_path)
    for path, line, _ in PLANTED.values():
        target = tree / path
        target.write_text(target.read_text() + f"\n{line}  # planted\n")
    code = _lint(tree, monkeypatch, capsys)
    output = capsys.readouterr().out
    assert code != 0, output
    assert _verdicts(output) == dict.fromkeys(PLANTED, "BROKEN"), output
    for path, _, imported in PLANTED.values():
        module = path.removesuffix(".py").replace("/", ".")
        assert f"{module} -> {imported}" in output, output
