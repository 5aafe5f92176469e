"""Readers for declared dependencies: pyproject.toml (PEP 621, PEP 735, poetry, hatch, pdm, uv),
setup.cfg and setup.py (parsed with `ast`, never executed)."""

from __future__ import annotations

import ast
import configparser
import tomllib
from pathlib import Path
from typing import Any

from dependency_groups import DependencyGroupResolver
from packaging.utils import canonicalize_name

from replicate.envs.collect import Collected, classify_token, read_text
from replicate.envs.poetry import poetry_requirement
from replicate.envs.reqfiles import read_requirements, read_tox, requirement_lines

TEST_GROUPS = frozenset(
    {"test", "tests", "testing", "dev", "develop", "development", "devel", "ci"}
)
_HATCH_ENVS = ("default", "test", "tests", "hatch-test")


def is_test_group(name: str) -> bool:
    """True for an extra or group name that reads as test or development requirements, once
    normalised as PEP 503 and PEP 735 require (`Test_Suite` is `test-suite`)."""
    normalised = canonicalize_name(name)
    return normalised in TEST_GROUPS or normalised.startswith("test")


def load_toml(path: Path) -> dict[str, Any] | None:
    """A parsed TOML file, or None when absent or invalid."""
    text = read_text(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


def load_pyproject(root: Path) -> dict[str, Any] | None:
    """The parsed pyproject.toml, or None when absent or invalid."""
    return load_toml(root / "pyproject.toml")


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if isinstance(value, list | tuple):
        return [v for v in value if isinstance(v, str)]
    return []


def _table(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def add_tokens(texts: list[str], target: list[str], out: Collected) -> int:
    """Classify requirement strings into `target`; self-installs request extras. Returns count."""
    count = 0
    for text in texts:
        token = classify_token(text)
        if token.is_self:
            out.requested_extras.extend(token.self_extras)
        elif token.requirement:
            target.append(token.requirement)
            count += 1
        elif token.note:
            out.note(token.note)
    return count


def read_pyproject(root: Path, out: Collected) -> None:
    """PEP 621 project table, PEP 735 groups, poetry, hatch, pdm and uv dev dependencies."""
    data = load_pyproject(root)
    if data is None:
        if (root / "pyproject.toml").is_file():
            out.note("could not parse pyproject.toml")
        return
    project = _table(data.get("project"))
    if isinstance(project.get("name"), str):
        out.dist_names.append(project["name"])
    if "dependencies" in project:
        count = add_tokens(_strings(project["dependencies"]), out.runtime, out)
        out.note(f"read pyproject.toml [project] dependencies ({count})")
    for name, reqs in _table(project.get("optional-dependencies")).items():
        extra: list[str] = []
        add_tokens(_strings(reqs), extra, out)
        out.add_extra(name, extra)
    tool = _table(data.get("tool"))
    _read_dependency_groups(_table(data.get("dependency-groups")), out)
    _read_poetry(_table(tool.get("poetry")), out)
    _read_hatch(_table(tool.get("hatch")), out)
    pdm_groups = _table(_table(tool.get("pdm")).get("dev-dependencies"))
    for name, reqs in pdm_groups.items():
        if is_test_group(name):
            add_tokens(_strings(reqs), out.test, out)
            out.note(f"read pyproject.toml [tool.pdm.dev-dependencies] {name}")
    uv_dev = _strings(_table(tool.get("uv")).get("dev-dependencies"))
    if uv_dev:
        add_tokens(uv_dev, out.test, out)
        out.note("read pyproject.toml [tool.uv] dev-dependencies")
    tox = _table(tool.get("tox"))
    if isinstance(tox.get("legacy_tox_ini"), str):
        read_tox(root, tox["legacy_tox_ini"], "pyproject.toml [tool.tox] legacy_tox_ini", out)
    read_tox_toml(root, _table(tox.get("env_run_base")), "pyproject.toml [tool.tox]", out)


def read_tox_toml(root: Path, base: dict[str, Any], origin: str, out: Collected) -> None:
    """`env_run_base` `deps` and `extras` of a native TOML tox configuration (tox >= 4.21)."""
    if not base:
        return
    lines: list[str] = []
    for dep in _strings(base.get("deps")):
        dep = dep.replace("{tox_root}/", "").replace("{tox_root}", ".")
        if "{" in dep:
            out.note(f"ignored tox dependency with a substitution {dep!r}")
            continue
        lines.append(dep)
    reqs = requirement_lines(root, root, lines, out)
    out.test.extend(reqs)
    out.requested_extras.extend(_strings(base.get("extras")))
    out.note(f"read {origin} env_run_base deps ({len(reqs)})")


def _read_dependency_groups(groups: dict[str, Any], out: Collected) -> None:
    """PEP 735 groups that read as test requirements, resolved by `dependency-groups` (names
    normalised, includes followed, cycles and duplicate names reported)."""
    if not groups:
        return
    try:
        resolver = DependencyGroupResolver(groups)
    except (ValueError, TypeError) as exc:
        out.note(f"could not read pyproject.toml [dependency-groups]: {exc}")
        return
    for name in groups:
        if not is_test_group(name):
            continue
        try:
            reqs = [str(req) for req in resolver.resolve(name)]
        except (ValueError, TypeError, LookupError) as exc:
            out.note(f"could not read pyproject.toml [dependency-groups] {name}: {exc}")
            continue
        count = add_tokens(reqs, out.test, out)
        out.note(f"read pyproject.toml [dependency-groups] {name} ({count})")


def _read_poetry(poetry: dict[str, Any], out: Collected) -> None:
    if not poetry:
        return
    if isinstance(poetry.get("name"), str):
        out.dist_names.append(poetry["name"])
    _poetry_table(_table(poetry.get("dependencies")), out.runtime, out, "dependencies")
    _poetry_table(_table(poetry.get("dev-dependencies")), out.test, out, "dev-dependencies")
    for group, body in _table(poetry.get("group")).items():
        if is_test_group(group):
            deps = _table(_table(body).get("dependencies"))
            _poetry_table(deps, out.test, out, f"group.{group}.dependencies")
    for name, members in _table(poetry.get("extras")).items():
        out.add_extra(name, [m for m in _strings(members)])


def _poetry_table(table: dict[str, Any], target: list[str], out: Collected, label: str) -> None:
    count = 0
    for name, spec in table.items():
        if name.lower() == "python":
            continue
        requirement, note = poetry_requirement(name, spec)
        if note:
            out.note(note)
        if requirement:
            target.append(requirement)
            count += 1
    if table:
        out.note(f"read pyproject.toml [tool.poetry.{label}] ({count})")


def _read_hatch(hatch: dict[str, Any], out: Collected) -> None:
    envs = _table(hatch.get("envs"))
    for env_name in _HATCH_ENVS:
        env = _table(envs.get(env_name))
        reqs = _strings(env.get("dependencies")) + _strings(env.get("extra-dependencies"))
        if reqs:
            count = add_tokens(reqs, out.test, out)
            out.note(f"read pyproject.toml [tool.hatch.envs.{env_name}] dependencies ({count})")
        out.requested_extras.extend(_strings(env.get("features")))


def read_setup_cfg(root: Path, out: Collected) -> None:
    """`[metadata] name`, `[options] install_requires` and `tests_require`, extras_require."""
    text = read_text(root / "setup.cfg")
    if text is None:
        return
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        out.note("could not parse setup.cfg")
        return
    if parser.has_option("metadata", "name"):
        out.dist_names.append(parser.get("metadata", "name").strip())
    if parser.has_section("options"):
        options = parser["options"]
        count = add_tokens(
            _cfg_list(root, options.get("install_requires", ""), out), out.runtime, out
        )
        count += add_tokens(_cfg_list(root, options.get("tests_require", ""), out), out.test, out)
        out.note(f"read setup.cfg [options] ({count})")
    if parser.has_section("options.extras_require"):
        for name, value in parser["options.extras_require"].items():
            extra: list[str] = []
            add_tokens(_cfg_list(root, value, out), extra, out)
            out.add_extra(name, extra)
    if parser.has_section("tox:tox") or parser.has_section("testenv"):
        read_tox(root, text, "setup.cfg", out)


def _cfg_list(root: Path, value: str, out: Collected) -> list[str]:
    value = value.strip()
    if value.startswith("file:"):
        reqs: list[str] = []
        for name in value[len("file:") :].split(","):
            reqs.extend(read_requirements(root, root / name.strip(), out, seen=set()))
        return reqs
    lines = (line.split(" #", 1)[0].strip() for line in value.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def read_setup_py(root: Path, out: Collected) -> None:
    """Literal `name=`, `install_requires=`, `tests_require=`, `extras_require=` of `setup(...)`."""
    text = read_text(root / "setup.py")
    if text is None:
        return
    try:
        tree = ast.parse(text)
    except SyntaxError:
        out.note("could not parse setup.py")
        return
    names = _module_literals(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _call_name(node.func) == "setup":
            _read_setup_call(node, names, out)


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _module_literals(tree: ast.Module) -> dict[str, object]:
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                value = literal(node.value, values)
                if value is not None:
                    values[target.id] = value
    return values


def literal(node: ast.expr, names: dict[str, object]) -> object:
    """A literal value, a module-level name bound to one, or a `+` of two lists; else None."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal(node.left, names), literal(node.right, names)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None


def _read_setup_call(call: ast.Call, names: dict[str, object], out: Collected) -> None:
    found = {kw.arg: literal(kw.value, names) for kw in call.keywords if kw.arg}
    if isinstance(found.get("name"), str):
        out.dist_names.append(str(found["name"]))
    count = add_tokens(_strings(found.get("install_requires")), out.runtime, out)
    count += add_tokens(_strings(found.get("tests_require")), out.test, out)
    extras = found.get("extras_require")
    if isinstance(extras, dict):
        for name, reqs in extras.items():
            if isinstance(name, str):
                extra: list[str] = []
                add_tokens(_strings(reqs), extra, out)
                out.add_extra(name.split(":", 1)[0], extra)
    out.note(f"read setup.py setup() ({count})")
