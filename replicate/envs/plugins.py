"""Pytest plugins a repository's pytest configuration needs (from `addopts`, `required_plugins`,
`-p NAME` and plugin-specific ini keys)."""

from __future__ import annotations

import configparser
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path

from replicate.envs.collect import read_text

# Option prefix -> distribution. Longest prefixes first is not needed: prefixes are disjoint.
_OPTION_PLUGINS: tuple[tuple[str, str], ...] = (
    ("--cov", "pytest-cov"),
    ("--no-cov", "pytest-cov"),
    ("--numprocesses", "pytest-xdist"),
    ("--maxprocesses", "pytest-xdist"),
    ("--dist", "pytest-xdist"),
    ("--tx", "pytest-xdist"),
    ("--benchmark", "pytest-benchmark"),
    ("--timeout", "pytest-timeout"),
    ("--doctest-plus", "pytest-doctestplus"),
    ("--doctest-rst", "pytest-doctestplus"),
    ("--mypy", "pytest-mypy"),
    ("--flake8", "pytest-flake8"),
    ("--black", "pytest-black"),
    ("--isort", "pytest-isort"),
    ("--pylint", "pytest-pylint"),
    ("--reruns", "pytest-rerunfailures"),
    ("--only-rerun", "pytest-rerunfailures"),
    ("--randomly", "pytest-randomly"),
    ("--asyncio-mode", "pytest-asyncio"),
    ("--mpl", "pytest-mpl"),
    ("--html", "pytest-html"),
    ("--hypothesis-", "hypothesis"),
    ("--ds", "pytest-django"),
    ("--reuse-db", "pytest-django"),
    ("--nomigrations", "pytest-django"),
    ("--forked", "pytest-forked"),
    ("--snapshot-update", "syrupy"),
    ("--env", "pytest-env"),
)
_INI_PLUGINS: dict[str, str] = {
    "asyncio_mode": "pytest-asyncio",
    "asyncio_default_fixture_loop_scope": "pytest-asyncio",
    "timeout": "pytest-timeout",
    "timeout_method": "pytest-timeout",
    "doctest_plus": "pytest-doctestplus",
    "doctest_rst": "pytest-doctestplus",
    "DJANGO_SETTINGS_MODULE": "pytest-django",
    "django_find_project": "pytest-django",
    "env": "pytest-env",
    "mock_use_standalone_module": "pytest-mock",
    "looponfailroots": "pytest-xdist",
    "mpl-baseline-path": "pytest-mpl",
    "flake8-max-line-length": "pytest-flake8",
}
_BUILTIN_PLUGINS = frozenset(
    {"pytester", "doctest", "cacheprovider", "capture", "debugging", "faulthandler", "junitxml",
     "legacypath", "logging", "monkeypatch", "nose", "pastebin", "python", "recwarn", "runner",
     "setuponly", "setupplan", "skipping", "stepwise", "terminal", "tmpdir", "unittest",
     "warnings", "assertion", "main", "mark", "fixtures", "helpconfig", "python_path",
     "threadexception", "unraisableexception"}
)  # fmt: skip
_MODULE_DISTS = {
    "xdist": "pytest-xdist",
    "cov": "pytest-cov",
    "pytest_cov": "pytest-cov",
    "anyio": "anyio",
    "hypothesispytest": "hypothesis",
    "syrupy": "syrupy",
}


@dataclass(frozen=True)
class PytestConfig:
    """The pytest configuration pytest itself would pick: where, `addopts`, ini keys."""

    origin: str
    addopts: tuple[str, ...]
    required_plugins: tuple[str, ...]
    keys: tuple[str, ...]


def find_pytest_config(root: Path) -> PytestConfig | None:
    """The first of pytest.ini, .pytest.ini, pyproject.toml, tox.ini, setup.cfg with pytest
    settings (pytest's own precedence)."""
    for name in ("pytest.ini", ".pytest.ini"):
        text = read_text(root / name)
        if text is not None:
            return _ini_config(text, "pytest", name) or PytestConfig(name, (), (), ())
    found = _pyproject_config(root)
    if found is not None:
        return found
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        text = read_text(root / name)
        if text is not None:
            config = _ini_config(text, section, name)
            if config is not None:
                return config
    return None


def _split(value: object) -> tuple[str, ...]:
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    if isinstance(value, str):
        try:
            return tuple(shlex.split(value))
        except ValueError:
            return tuple(value.split())
    return ()


def _ini_config(text: str, section: str, origin: str) -> PytestConfig | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section(section):
        return None
    body = parser[section]
    return PytestConfig(
        origin=f"{origin} [{section}]",
        addopts=_split(body.get("addopts", "")),
        required_plugins=_split(body.get("required_plugins", "")),
        keys=tuple(body.keys()),
    )


def _pyproject_config(root: Path) -> PytestConfig | None:
    text = read_text(root / "pyproject.toml")
    if text is None:
        return None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    pytest_table = data.get("tool", {}).get("pytest", {})
    if not isinstance(pytest_table, dict):
        return None
    table = pytest_table.get("ini_options", pytest_table)
    if not isinstance(table, dict) or not table:
        return None
    return PytestConfig(
        origin="pyproject.toml [tool.pytest]",
        addopts=_split(table.get("addopts", "")),
        required_plugins=_split(table.get("required_plugins", "")),
        keys=tuple(k for k in table if k != "ini_options"),
    )


def plugins_for(config: PytestConfig) -> list[str]:
    """Distributions the configuration needs (requirement strings, in first-seen order)."""
    found: list[str] = list(config.required_plugins)
    words = list(config.addopts)
    for index, word in enumerate(words):
        option = word.split("=", 1)[0]
        if option == "-n" or (option.startswith("-n") and option[2:].isalnum() and len(word) > 2):
            found.append("pytest-xdist")
        elif option == "-p" and index + 1 < len(words):
            found.extend(_plugin_module(words[index + 1]))
        elif option.startswith("-p") and len(option) > 2 and not option.startswith("--"):
            found.extend(_plugin_module(option[2:]))
        else:
            found.extend(dist for prefix, dist in _OPTION_PLUGINS if option.startswith(prefix))
    found.extend(dist for key, dist in _INI_PLUGINS.items() if key in config.keys)
    return list(dict.fromkeys(found))


def _plugin_module(name: str) -> list[str]:
    if name.startswith("no:") or name in _BUILTIN_PLUGINS or "." in name:
        return []
    if name in _MODULE_DISTS:
        return [_MODULE_DISTS[name]]
    base = name.removeprefix("pytest_").removeprefix("pytest-")
    return ["pytest-" + base.replace("_", "-")]
