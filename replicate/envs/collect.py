"""What the dependency readers found, and how one requirement token is classified."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

_SELF = re.compile(r"^(?:\.|\./|\{toxinidir\}/?|file:\.?/?)(?:\[(?P<extras>[^\]]*)\])?$")
_ARCHIVE = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz")


@dataclass
class Collected:
    """Mutable accumulator filled by the readers; `discover_requirements` turns it into a record.

    `extras` maps an optional group (extra) name, as written, to its requirement strings;
    `requested_extras` are the repository's own extras that its test tooling installs
    (`.[test]`, tox `extras = test`, a self-reference `name[test]`).
    """

    runtime: list[str] = field(default_factory=list)
    test: list[str] = field(default_factory=list)
    extras: dict[str, list[str]] = field(default_factory=dict)
    requested_extras: list[str] = field(default_factory=list)
    dist_names: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add_extra(self, name: str, reqs: list[str]) -> None:
        """Merge requirements of extra `name` (several files may declare the same extra)."""
        self.extras.setdefault(name, []).extend(reqs)

    def note(self, text: str) -> None:
        """Record a human-readable note once."""
        if text not in self.notes:
            self.notes.append(text)


@dataclass(frozen=True)
class Token:
    """One requirement token: a PEP 508 requirement, a self-install (with extras), or neither."""

    requirement: str | None = None
    self_extras: tuple[str, ...] = ()
    is_self: bool = False
    note: str | None = None


def classify_token(text: str) -> Token:
    """Classify `text` (a requirement line without options) as requirement, self-install or junk.

    `.`, `./`, `.[test]`, `{toxinidir}` are the repository itself; URLs, local paths and archives
    are dropped with a note; anything else must parse as a PEP 508 requirement.
    """
    text = text.strip()
    match = _SELF.match(text)
    if match:
        extras = match.group("extras") or ""
        names = tuple(e.strip() for e in extras.split(",") if e.strip())
        return Token(self_extras=names, is_self=True)
    if "://" in text or text.startswith(("git+", "hg+", "svn+", "bzr+")):
        return Token(note=f"dropped URL requirement {text!r}")
    if text.startswith((".", "/", "~")) or text.endswith(_ARCHIVE):
        return Token(note=f"dropped local path requirement {text!r}")
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return Token(note=f"dropped unparseable requirement {text!r}")
    if req.url:
        return Token(note=f"dropped URL requirement {text!r}")
    return Token(requirement=str(req))


def inside(root: Path, path: Path) -> bool:
    """True when `path` (resolved) lies inside `root` (resolved)."""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def read_text(path: Path) -> str | None:
    """A file's text (UTF-8, undecodable bytes replaced), or None when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
