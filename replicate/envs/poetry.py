"""Poetry dependency tables to PEP 508 requirements (caret and tilde constraints, loosely)."""

from __future__ import annotations

import re

from packaging.requirements import InvalidRequirement, Requirement

_VERSION = re.compile(r"^\d+(?:\.\d+)*$")


def poetry_requirement(name: str, spec: object) -> tuple[str | None, str | None]:
    """(requirement or None, note or None) for one entry of a poetry dependency table.

    Optional, git, path and url dependencies are dropped with a note; a constraint that cannot be
    translated is dropped and the bare name kept.
    """
    extras: list[str] = []
    markers = ""
    if isinstance(spec, list):
        return _checked(name, "", [], ""), f"kept {name} without its multiple poetry constraints"
    if isinstance(spec, dict):
        if spec.get("optional") is True:
            return None, f"ignored optional poetry dependency {name}"
        for source in ("git", "path", "url", "file"):
            if source in spec:
                return None, f"dropped {source} poetry dependency {name}"
        extras = [e for e in spec.get("extras", []) if isinstance(e, str)]
        markers = spec.get("markers", "") if isinstance(spec.get("markers"), str) else ""
        spec = spec.get("version", "*")
    if not isinstance(spec, str):
        return _checked(name, "", extras, markers), None
    constraint = convert_constraint(spec)
    if constraint is None:
        return _checked(name, "", extras, markers), f"dropped poetry constraint {spec!r} of {name}"
    return _checked(name, constraint, extras, markers), None


def _checked(name: str, constraint: str, extras: list[str], markers: str) -> str | None:
    text = name + (f"[{','.join(extras)}]" if extras else "") + constraint
    if markers:
        text += f"; {markers}"
    try:
        return str(Requirement(text))
    except InvalidRequirement:
        try:
            return str(Requirement(name))
        except InvalidRequirement:
            return None


def convert_constraint(spec: str) -> str | None:
    """A PEP 440 specifier for a poetry constraint (`^1.2`, `~1.2`, `1.2.*`, `>=1,<2`), or None."""
    spec = spec.strip()
    if spec in ("", "*"):
        return ""
    if "||" in spec or "|" in spec:
        return None
    parts = [p.strip() for p in re.split(r",|\s+(?=[<>=!~^])", spec) if p.strip()]
    converted = [_one(p) for p in parts]
    if any(c is None for c in converted):
        return None
    return ",".join(c for c in converted if c)


def _one(part: str) -> str | None:
    if part.startswith("^"):
        return _caret(part[1:].strip())
    if part.startswith("~") and not part.startswith("~="):
        return _tilde(part[1:].strip())
    if _VERSION.match(part):
        return f"=={part}"
    if re.fullmatch(r"\d+(?:\.\d+)*\.\*", part):
        return f"=={part}"
    if re.fullmatch(r"(?:==|!=|>=|<=|>|<|~=)\s*[\w.*+!-]+", part):
        return part.replace(" ", "")
    return None


def _numbers(version: str) -> list[int] | None:
    if not _VERSION.match(version):
        return None
    return [int(x) for x in version.split(".")]


def _caret(version: str) -> str | None:
    numbers = _numbers(version)
    if numbers is None:
        return None
    index = next((i for i, n in enumerate(numbers) if n != 0), len(numbers) - 1)
    upper = [*numbers[:index], numbers[index] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"


def _tilde(version: str) -> str | None:
    numbers = _numbers(version)
    if numbers is None:
        return None
    upper = [numbers[0] + 1] if len(numbers) == 1 else [numbers[0], numbers[1] + 1]
    return f">={version},<{'.'.join(map(str, upper))}"
