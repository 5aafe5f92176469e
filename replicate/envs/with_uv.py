"""Resolving and installing with uv where it is there: the same lock and the same files as pip,
several times faster (`bench/env_build.py`).

uv is given what pip is configured with (its indexes, find-links and constraints, read with
``pip config list``: files and ``PIP_`` variables alike) and is told to pick the best version
across all of them as pip does (``--index-strategy unsafe-best-match``); its own configuration is
ignored (``--no-config``, no ``UV_`` variable but its cache's), so both tools resolve alike.
Where pip is configured with a setting uv cannot be given, or uv is not installed, or
``REPLICATE_INSTALLER=pip``, everything goes to pip; where uv fails, the caller asks pip.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Mapping, Sequence

from packaging.utils import canonicalize_name

from replicate.errors import ReplicateError

INSTALLERS = ("auto", "pip", "uv")
# pip settings uv is given, by the flag (or variable) that carries each
_AS_FLAG = {
    "index-url": "--index-url",
    "extra-index-url": "--extra-index-url",
    "find-links": "--find-links",
    "constraint": "--constraint",
}
# pip's yes-or-no settings uv is given, by the flags that carry each when it is on
_SWITCHES = {"no-index": ["--no-index"], "pre": ["--prerelease", "allow"]}
# pip settings that change nothing a resolution or an install picks
_HARMLESS = frozenset(
    {
        "cache-dir",
        "default-timeout",
        "disable-pip-version-check",
        "no-cache-dir",
        "no-color",
        "no-input",
        "no-warn-script-location",
        "progress-bar",
        "quiet",
        "retries",
        "root-user-action",
        "timeout",
        "verbose",
    }
)


def installer_choice(environ: Mapping[str, str]) -> str:
    """``REPLICATE_INSTALLER`` (auto when unset): one of `INSTALLERS` (else a one-line error:
    the command refuses it before any work, `replicate.cli.main`)."""
    chosen = environ.get("REPLICATE_INSTALLER", "auto").strip().lower() or "auto"
    if chosen not in INSTALLERS:
        raise ReplicateError(
            f"unknown REPLICATE_INSTALLER {chosen!r}: choose {', '.join(INSTALLERS)}"
        )
    return chosen


def uv_binary() -> str | None:
    """The uv executable: the one the ``uv`` package installed beside us, else one on PATH."""
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def pip_settings(listing: str) -> dict[str, str]:
    """What pip uses when it installs, from ``pip config list``: a variable over the
    ``install`` section over the ``global`` one."""
    ranked: dict[str, tuple[int, str]] = {}
    rank = {"global": 0, "install": 1, ":env:": 2}
    for line in listing.splitlines():
        name, sep, quoted = line.partition("=")
        section, dot, key = name.rpartition(".")
        if not (sep and dot) or section not in rank:
            continue
        try:
            value = ast.literal_eval(quoted)
        except (ValueError, SyntaxError):
            value = quoted
        if key not in ranked or ranked[key][0] <= rank[section]:
            ranked[key] = (rank[section], str(value))
    return {key: value for key, (_, value) in ranked.items()}


def uv_sources(settings: Mapping[str, str]) -> tuple[list[str], dict[str, str]] | None:
    """uv's flags (and variables) for pip's `settings`; None when one of them cannot be given
    to uv (pip alone then does the work)."""
    flags: list[str] = ["--no-config", "--index-strategy", "unsafe-best-match"]
    env: dict[str, str] = {}
    for key in sorted(settings):
        value = settings[key]
        if key in _AS_FLAG:
            for item in value.split():
                flags += [_AS_FLAG[key], item]
        elif key in _SWITCHES:
            flags += _SWITCHES[key] if _true(value) else []
        elif key == "cert":
            env["SSL_CERT_FILE"] = value
        elif key not in _HARMLESS:
            return None
    return flags, env


def _true(value: str) -> bool:
    return value.strip().lower() in ("1", "true", "yes", "on")


def uv_env(base: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """The environment uv runs in: `base` without uv's own settings (its cache's kept)."""
    env = {k: v for k, v in base.items() if not k.startswith("UV_") or k == "UV_CACHE_DIR"}
    env.update(extra)
    env["UV_NO_PROGRESS"] = "1"
    return env


def compile_args(uv: str, python: str, sources: Sequence[str]) -> list[str]:
    """`uv pip compile` of requirements on stdin, for `python`, as bare pinned lines."""
    head = [uv, "pip", "compile", "-", "--python", python, "--quiet"]
    return [*head, "--no-header", "--no-annotate", *sources]


def compiled_lines(text: str) -> tuple[str, ...]:
    """The lock lines of `uv pip compile`'s output, as pip's report gives them: ``name==version``
    or ``name @ url``, names normalised, sorted."""
    lines = set()
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith(("#", "-")):
            continue
        for sep in ("==", " @ "):
            name, found, rest = line.partition(sep)
            if found:
                bare = name.split("[", 1)[0].strip()
                lines.add(f"{canonicalize_name(bare)}{sep}{rest.strip()}")
                break
    return tuple(sorted(lines))


def install_args(uv: str, python: str, sources: Sequence[str], binary_only: bool) -> list[str]:
    """`uv pip install` of pinned lines (given after these), without their dependencies."""
    args = [uv, "pip", "install", "--python", python, "--no-deps", "--quiet", "--link-mode", "copy"]
    if binary_only:
        args += ["--only-binary", ":all:"]
    return [*args, *sources]
