"""A repository's licence, as its own metadata states it: the sdist's PKG-INFO, pyproject.toml,
or the first line of a LICENSE file. None when nothing says."""

from __future__ import annotations

import email.parser
import tomllib
from pathlib import Path

MAX_CHARS = 80
_FILES = ("LICENSE", "LICENSE.txt", "LICENSE.md", "LICENSE.rst", "LICENCE", "COPYING")


def find_licence(tree: Path) -> str | None:
    return (
        _from_pkg_info(tree / "PKG-INFO")
        or _from_pyproject(tree / "pyproject.toml")
        or (_from_file(tree))
    )


def _from_pkg_info(path: Path) -> str | None:
    if not path.is_file() or path.is_symlink():
        return None
    headers = email.parser.Parser().parsestr(path.read_text(encoding="utf-8", errors="replace"))
    expression = _short(headers.get("License-Expression"))
    if expression:
        return expression
    for classifier in headers.get_all("Classifier") or []:
        if classifier.startswith("License ::") and classifier.strip() != "License :: OSI Approved":
            return _short(classifier.rsplit("::", 1)[-1])
    return _short(headers.get("License"))


def _from_pyproject(path: Path) -> str | None:
    if not path.is_file() or path.is_symlink():
        return None
    try:
        project = tomllib.loads(path.read_text(encoding="utf-8")).get("project", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    value = project.get("license") if isinstance(project, dict) else None
    if isinstance(value, str):
        return _short(value)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return _short(value["text"])
    return None


def _from_file(tree: Path) -> str | None:
    for name in _FILES:
        path = tree / name
        if path.is_file() and not path.is_symlink():
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            first = next((line.strip() for line in lines if line.strip()), None)
            return _short(first)
    return None


def _short(value: str | None) -> str | None:
    """A one-line licence name; None for an absent, UNKNOWN or whole-text value."""
    if not value:
        return None
    text = " ".join(value.split())
    if not text or text.upper() in ("UNKNOWN", "NONE") or len(text) > MAX_CHARS:
        return None
    return text
