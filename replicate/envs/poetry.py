"""Poetry dependency tables to PEP 508 requirements, converted by poetry-core (Poetry's own
parser: caret, tilde, wildcard, `||` and pre-release constraints, `python` and `platform` keys)."""

from __future__ import annotations

from typing import Any

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from poetry.core.constraints.version import VersionRange, VersionUnion
from poetry.core.factory import Factory
from poetry.core.packages.dependency import Dependency

_SOURCES = ("git", "path", "url", "file")


def poetry_requirement(name: str, spec: object) -> tuple[str | None, str | None]:
    """(requirement or None, note or None) for one entry of a poetry dependency table.

    Optional, git, path and url dependencies are dropped with a note; a constraint that cannot be
    translated is dropped and the bare name kept. Several constraints for one name (a list of
    tables, each for some Pythons or platforms) keep the bare name: pip would merge them.
    """
    if isinstance(spec, list):
        return _checked(name), f"kept {name} without its multiple poetry constraints"
    if isinstance(spec, dict):
        if spec.get("optional") is True:
            return None, f"ignored optional poetry dependency {name}"
        for source in _SOURCES:
            if source in spec:
                return None, f"dropped {source} poetry dependency {name}"
        return _from_table(name, spec)
    if not isinstance(spec, str):
        return _checked(name), None
    try:
        dependency = Factory.create_dependency(name, spec)
    except ValueError:
        return _checked(name), f"dropped poetry constraint {spec!r} of {name}"
    return _pep508(dependency, spec)


def _from_table(name: str, spec: dict[str, Any]) -> tuple[str | None, str | None]:
    table = dict(spec)
    note = None
    markers = table.get("markers")
    if markers is not None and not _valid_marker(markers):
        table.pop("markers")
        note = f"dropped poetry markers {markers!r} of {name}"
    try:
        dependency = Factory.create_dependency(name, table)
    except ValueError:
        table["version"] = "*"
        try:
            dependency = Factory.create_dependency(name, table)
        except ValueError:
            return _checked(name), f"dropped poetry table of {name}"
        note = f"dropped poetry constraint {spec.get('version')!r} of {name}"
    requirement, widened = _pep508(dependency, str(spec.get("version", "*")))
    return requirement, note or widened


def _valid_marker(markers: object) -> bool:
    if not isinstance(markers, str):
        return False
    try:
        Marker(markers)
    except InvalidMarker:
        return False
    return True


def _pep508(dependency: Dependency, spec: str) -> tuple[str | None, str | None]:
    """PEP 508 has no "or": a union of ranges with gaps widens to the one range spanning them."""
    constraint = dependency.constraint
    note = None
    if isinstance(constraint, VersionUnion) and not (
        constraint.excludes_single_version or constraint.excludes_single_wildcard_range
    ):
        first, last = constraint.ranges[0], constraint.ranges[-1]
        hull = VersionRange(first.min, last.max, first.include_min, last.include_max)
        dependency = dependency.with_constraint(hull)
        note = f"widened poetry constraint {spec!r} of {dependency.name} to {hull}"
    try:
        return str(Requirement(dependency.to_pep_508())), note
    except InvalidRequirement:
        return _checked(dependency.name), f"dropped poetry constraint {spec!r} of {dependency.name}"


def _checked(name: str) -> str | None:
    try:
        return str(Requirement(name))
    except InvalidRequirement:
        return None
