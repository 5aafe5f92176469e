"""One exact pin per distribution.  A repository that keeps a requirements file per Python
version (wcwidth 0.2.13: `requirements-tests36.txt`, `-tests37.txt`, `-tests39.txt`) pins one
distribution to several versions; read together they never resolve, and finding what to leave
out took pip ~40 dry runs (over six minutes) on every gen of it.  The files are alternatives,
and the newest is the one most likely to suit the interpreter we run: the highest pin is kept,
the others are dropped (and said so)."""

from __future__ import annotations

from collections.abc import Sequence

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version


def exact_pin(text: str) -> tuple[str, Version] | None:
    """The distribution and version `text` pins with one ``==`` (no wildcard), else None."""
    try:
        req = Requirement(text)
        (spec,) = req.specifier
        if spec.operator != "==" or "*" in spec.version:
            return None
        return canonicalize_name(req.name), Version(spec.version)
    except (InvalidRequirement, InvalidVersion, ValueError):
        return None


def one_pin_each(reqs: Sequence[str], over: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """`reqs` (in order) with the pins of each distribution at one version: the version `over`
    pins it to (the runtime requirements, over the tests'), else the highest `reqs` pin it to
    (every pin of that version is kept: they may differ in extras); then the pins dropped."""
    fixed = _highest(over)
    chosen = {**_highest(reqs), **fixed}
    kept: list[str] = []
    dropped: list[str] = []
    for text in reqs:
        pin = exact_pin(text)
        (kept if pin is None or chosen[pin[0]] == pin[1] else dropped).append(text)
    return kept, dropped


def _highest(texts: Sequence[str]) -> dict[str, Version]:
    """The highest version each distribution is pinned to among `texts`."""
    found: dict[str, Version] = {}
    for pin in map(exact_pin, texts):
        if pin is not None:
            name, version = pin
            found[name] = max(version, found.get(name, version))
    return found
