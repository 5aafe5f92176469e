"""Discover what a repository needs to import and to run its tests, by reading files only."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.markers import UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from replicate.envs.collect import Collected
from replicate.envs.pins import one_pin_each
from replicate.envs.plugins import find_pytest_config, plugins_for
from replicate.envs.reqfiles import read_noxfile, read_requirement_files, read_tox
from replicate.envs.sources import (
    is_test_group,
    load_toml,
    read_pyproject,
    read_setup_cfg,
    read_setup_py,
    read_tox_toml,
)
from replicate.envs.test_imports import undeclared_test_imports

_INSTALLERS = frozenset({"pip", "setuptools", "wheel"})


@dataclass(frozen=True)
class Requirements:
    """A repository's requirements: PEP 508 strings, without the repository's own distribution.

    `runtime` is what importing the package needs, `test` what its tests need on top (always
    including pytest), `pytest_plugins` what its pytest configuration loads; `dist_names` are
    the repository's own distribution names, normalised.
    """

    runtime: tuple[str, ...]
    test: tuple[str, ...]
    pytest_plugins: tuple[str, ...]
    notes: tuple[str, ...]
    dist_names: tuple[str, ...]


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def discover_requirements(root: Path, dist_name: str | None) -> Requirements:
    """Read pyproject.toml, setup.cfg, setup.py, requirement files, tox.ini, noxfile.py and the
    pytest configuration under `root` (nothing is executed)."""
    found = Collected()
    read_pyproject(root, found)
    read_setup_cfg(root, found)
    read_setup_py(root, found)
    read_requirement_files(root, found)
    tox = root / "tox.ini"
    if tox.is_file():
        read_tox(root, tox.read_text(encoding="utf-8", errors="replace"), "tox.ini", found)
    tox_toml = load_toml(root / "tox.toml")
    if tox_toml is not None:
        read_tox_toml(root, _table(tox_toml.get("env_run_base")), "tox.toml", found)
    read_noxfile(root, found)
    names = [*found.dist_names, *([dist_name] if dist_name else [])]
    dist_names = tuple(dict.fromkeys(canonicalize_name(n) for n in names if n.strip()))
    return _finish(root, found, dist_names)


def _finish(root: Path, found: Collected, dist_names: tuple[str, ...]) -> Requirements:
    extras: dict[str, list[str]] = {}
    for key, value in found.extras.items():
        extras.setdefault(canonicalize_name(key), []).extend(value)
    wanted = [n for n in extras if is_test_group(n)]
    wanted += [canonicalize_name(n) for n in found.requested_extras]
    used: set[str] = set()
    test_raw = list(found.test)
    for name in dict.fromkeys(wanted):
        if name in extras and name not in used:
            used.add(name)
            test_raw.extend(extras[name])
    self_names = set(dist_names)
    runtime = _expand(found.runtime, extras, self_names, used)
    test = _expand(test_raw, extras, self_names, used)
    if used:
        found.note(f"included the repository's extras: {', '.join(sorted(used))}")
    ignored = sorted(set(extras) - used)
    if ignored:
        found.note(f"ignored optional groups: {', '.join(ignored)}")
    runtime = _one_pin_each(_filter(runtime, found, "runtime", keep_installers=True), (), found)
    test = [r for r in _filter(test, found, "test", keep_installers=False) if r not in runtime]
    test = _one_pin_each(test, runtime, found)
    undeclared = undeclared_test_imports(root, [*runtime, *test], dist_names)
    if undeclared:
        found.note(f"added what the tests import and nothing declares: {', '.join(undeclared)}")
        test += undeclared
    if "pytest" not in dist_names and not any(_name(r) == "pytest" for r in runtime + test):
        test.insert(0, "pytest")
    plugins = _plugins(root, found, set(dist_names))
    return Requirements(
        runtime=_sorted(runtime),
        test=_sorted(test),
        pytest_plugins=_sorted(plugins),
        notes=tuple(found.notes),
        dist_names=dist_names,
    )


def _one_pin_each(reqs: list[str], over: Sequence[str], found: Collected) -> list[str]:
    """`reqs` with one exact pin per distribution (`replicate.envs.pins`), each drop noted."""
    kept, dropped = one_pin_each(reqs, over)
    for text in dropped:
        found.note(f"dropped {text!r}: another file pins it to another version (kept the highest)")
    return kept


def _sorted(reqs: list[str]) -> tuple[str, ...]:
    return tuple(sorted(dict.fromkeys(reqs), key=lambda r: (_name(r), r)))


def _name(requirement: str) -> str:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""


def _expand(
    reqs: Iterable[str], extras: dict[str, list[str]], self_names: set[str], used: set[str]
) -> list[str]:
    """Requirements with self-references (`name[extra]`) replaced by those extras' contents."""
    result: list[str] = []
    for text in reqs:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) not in self_names:
            result.append(str(req))
            continue
        for extra in sorted(canonicalize_name(e) for e in req.extras):
            if extra in used or extra not in extras:
                continue
            used.add(extra)
            result.extend(_expand(extras[extra], extras, self_names, used))
    return result


def _filter(reqs: list[str], found: Collected, bucket: str, *, keep_installers: bool) -> list[str]:
    """Drop marker-false requirements and installers; keep first occurrences only."""
    kept: list[str] = []
    for text in reqs:
        req = Requirement(text)
        if req.marker is not None and not _marker_true(req):
            found.note(f"dropped {text!r}: its environment marker is false here")
            continue
        if not keep_installers and is_dev_tool(req.name):
            found.note(f"dropped {req.name} from {bucket} requirements (a development tool)")
            continue
        if canonicalize_name(req.name) in _INSTALLERS:
            if not keep_installers:
                found.note(f"dropped {req.name} from {bucket} requirements (an installer)")
                continue
            found.note(f"kept {req.name}: the repository needs it at run time")
        if text not in kept:
            kept.append(text)
    return kept


# Tools a development requirements file lists that running the tests does not need; they only
# widen the environment (twine -> keyring -> jaraco.* pulls in more-itertools, for one).
_DEV_TOOLS = frozenset(
    {
        "autoflake",
        "autopep8",
        "bandit",
        "black",
        "blue",
        "build",
        "bump2version",
        "bumpversion",
        "check-manifest",
        "codecov",
        "coveralls",
        "doc8",
        "docformatter",
        "flake8",
        "flit",
        "flit-core",
        "furo",
        "hatch",
        "isort",
        "mypy",
        "nox",
        "pip-tools",
        "pre-commit",
        "pycodestyle",
        "pydocstyle",
        "pyflakes",
        "pyroma",
        "pyupgrade",
        "pylint",
        "readme-renderer",
        "restructuredtext-lint",
        "ruff",
        "setuptools-scm",
        "sphinx",
        "tox",
        "towncrier",
        "twine",
        "wheel",
        "yapf",
        "zest-releaser",
    }
)
_DEV_PREFIXES = ("sphinx-", "sphinxcontrib-", "mkdocs", "types-", "flake8-", "pylint-")


def is_dev_tool(name: str) -> bool:
    """A formatter, linter, type checker, docs or release tool (not needed to run tests)."""
    canonical = canonicalize_name(name)
    return canonical in _DEV_TOOLS or canonical.startswith(_DEV_PREFIXES)


def _marker_true(req: Requirement) -> bool:
    assert req.marker is not None
    try:
        return req.marker.evaluate({"extra": ""})
    except (UndefinedComparison, UndefinedEnvironmentName):
        return True


def _plugins(root: Path, found: Collected, dist_names: set[str]) -> list[str]:
    config = find_pytest_config(root)
    if config is None:
        return []
    plugins = [p for p in plugins_for(config) if _name(p) and _name(p) not in dist_names]
    found.note(f"pytest configuration in {config.origin}; plugins: {', '.join(plugins) or 'none'}")
    return plugins
