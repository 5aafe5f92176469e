"""`npm:NAME@VERSION`: a pinned npm package's tarball (`npm pack`), unpacked and committed as a
git repository, as `pypi:` makes one of an sdist.

The tarball is what npm publishes (its `package/` folder); nothing of it runs (`npm pack` of a
registry package fetches the tarball, it runs no script of it). The commit is deterministic
(`pypi`'s fixed identity and dates), so the same tarball gives the same commit id everywhere.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from replicate.acquire.pypi import commit_tree, unpack
from replicate.cache import file_lock, staging_beside
from replicate.errors import ReplicateError
from replicate.npm_command import npm_messages, run_npm

PREFIX = "npm:"
PACK_TIMEOUT_S = 600.0
# a name, scoped or not (npm's rules: lowercase, URL-safe), then one exact version
_PIN = re.compile(
    r"^((?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*)@(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)$"
)


def is_npm_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def parse_npm_pin(spec: str) -> tuple[str, str]:
    """(name, version) of `npm:NAME@VERSION`; anything else is a one-line error."""
    match = _PIN.match(spec.strip()[len(PREFIX) :].strip())
    if match is None:
        raise ReplicateError(
            f"{spec!r}: an npm source is npm:NAME@VERSION (one exact version, e.g. "
            "npm:minimist@1.2.8)"
        )
    return match.group(1), match.group(2)


def tarball_repo(name: str, version: str, root: Path) -> Path:
    """The git repository of the tarball of `name@version` under `root` (made once, then
    reused): its folder is `NAME-VERSION` (a scope's `/` as `+`)."""
    folder = f"{name.lstrip('@').replace('/', '+')}-{version}"
    dest = root / folder
    with file_lock(dest.with_name(dest.name + ".lock")):
        if not dest.is_dir():
            staging = staging_beside(dest)
            try:
                archive = _pack(name, version, staging / "tarball")
                unpacked = staging / "unpacked" / folder
                unpacked.parent.mkdir()
                unpack(archive, staging / "extracted").rename(unpacked)  # npm's `package/`
                commit_tree(unpacked, f"{name} {version}")
                unpacked.parent.rename(dest)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return dest / folder


def _pack(name: str, version: str, into: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise ReplicateError("npm is missing: scripts/install.sh installs Debian's npm")
    into.mkdir(parents=True)
    argv = [npm, "pack", f"{name}@{version}", "--pack-destination", str(into)]
    try:
        done = run_npm(argv, into, PACK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ReplicateError(f"npm pack {name}@{version} took over {PACK_TIMEOUT_S:.0f}s") from None
    if done.returncode != 0:
        raise ReplicateError(f"cannot fetch npm:{name}@{version}: {_why(done.stderr)}")
    found = sorted(into.glob("*.tgz"))
    if len(found) != 1:
        raise ReplicateError(f"npm pack {name}@{version} gave no tarball")
    return found[0]


def _why(stderr: str) -> str:
    """npm's reason in one line: the registry's 404, no such version, or its last error."""
    lines = npm_messages(stderr)
    for mark in ("404 Not Found", "notarget No matching version"):
        found = next((ln for ln in lines if mark in ln), None)
        if found is not None:
            return found.removeprefix("notarget ")[:300]
    return (lines[-1] if lines else "npm pack failed")[:300]
