"""Which root-level modules a setuptools distribution installs, read (never run) from its
`setup.py`, `setup.cfg` and `pyproject.toml`.

A flat layout's root holds the library beside scripts that are not part of it: simplejson
4.3.0's `tsan_stress_simplejson.py`, a thread-sanitizer stress script that exits when imported,
sits beside the `simplejson` package its `setup.py` installs (`packages=[...]`, no
`py_modules`). Where the configuration names what it installs (`packages` or `py_modules`
given), a root-level module it does not list is not the library, and gives no targets;
where it names nothing (setuptools' automatic discovery, another build backend), every
root-level module counts, as before.
"""

from __future__ import annotations

import ast
import configparser
import tomllib
from pathlib import Path

from replicate.core import setup_call

MAX_BYTES = 1_000_000
KEYWORDS = ("packages", "py_modules")


def installed_root_modules(root: Path) -> frozenset[str] | None:
    """The root-level modules the distribution installs (its `py_modules`) when its setuptools
    configuration says what it installs; None when it does not say, or not in a form read
    without running it (then every root-level module counts)."""
    for read in (_setup_py, _setup_cfg, _pyproject):
        found = read(root)
        if found is not None:
            return found
    return None


def _setup_py(root: Path) -> frozenset[str] | None:
    call = setup_call(_read(root / "setup.py"))
    given = {k.arg: k.value for k in call.keywords if k.arg in KEYWORDS} if call else {}
    if not given:
        return None
    if "py_modules" not in given:
        return frozenset()
    try:
        return _names(ast.literal_eval(given["py_modules"]))
    except ValueError:
        return None


def _setup_cfg(root: Path) -> frozenset[str] | None:
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(_read(root / "setup.cfg"))
    except configparser.Error:
        return None
    if not any(parser.has_option("options", key) for key in KEYWORDS):
        return None
    return frozenset(parser.get("options", "py_modules", fallback="").split())


def _pyproject(root: Path) -> frozenset[str] | None:
    try:
        data = tomllib.loads(_read(root / "pyproject.toml"))
    except tomllib.TOMLDecodeError:
        return None
    options = data.get("tool", {}).get("setuptools", {})
    if not isinstance(options, dict) or not ({"packages", "py-modules"} & options.keys()):
        return None
    return _names(options.get("py-modules", []))


def _names(value: object) -> frozenset[str] | None:
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return frozenset(value)
    return None


def _read(path: Path) -> str:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            return ""
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
