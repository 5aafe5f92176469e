"""`pypi:NAME==VERSION`: a pinned PyPI sdist, unpacked and committed as a git repository.

The commit is deterministic (fixed author, committer and dates), so the same sdist gives the same
commit id on every machine: a batch minted from it can be resumed, or re-minted elsewhere, and
recognised as the same repository at the same commit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from replicate.cache import file_lock, staging_beside
from replicate.errors import ReplicateError

PREFIX = "pypi:"
DOWNLOAD_TIMEOUT_S = 600.0
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")
_GIT = ("git", "-c", "safe.directory=*", "-c", "core.autocrlf=false", "-c", "commit.gpgsign=false")
_FIXED = {
    "GIT_AUTHOR_NAME": "replicate",
    "GIT_AUTHOR_EMAIL": "replicate@localhost",
    "GIT_COMMITTER_NAME": "replicate",
    "GIT_COMMITTER_EMAIL": "replicate@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def is_pypi_spec(spec: str) -> bool:
    return spec.strip().startswith(PREFIX)


def parse_pin(spec: str) -> tuple[str, str]:
    """(name, version) of `pypi:NAME==VERSION`; anything else is a one-line error."""
    match = _PIN.match(spec.strip()[len(PREFIX) :].strip())
    if match is None:
        raise ReplicateError(f"{spec!r}: a PyPI source is pypi:NAME==VERSION (one exact version)")
    return match.group(1), match.group(2)


def sdist_repo(name: str, version: str, root: Path) -> Path:
    """The git repository of the sdist of `name==version` under `root` (made once, then reused).

    Downloaded with pip (`--no-deps --no-binary :all:`), unpacked, committed once with a fixed
    identity and date; built beside its final place and renamed there when complete."""
    dest = root / f"{name.lower()}-{version}"  # holds the sdist's own folder: its name is the key
    with file_lock(dest.with_name(dest.name + ".lock")):
        if not dest.is_dir():
            staging = staging_beside(dest)
            try:
                archive = _download(name, version, staging / "downloads")
                unpacked = unpack(archive, staging / "unpacked")
                commit_tree(unpacked, f"{name} {version}")
                shutil.rmtree(staging / "downloads")
                unpacked.parent.rename(dest)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return next(p for p in dest.iterdir() if p.is_dir())


def _download(name: str, version: str, into: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check"]
    command += ["--no-deps", "--no-binary", ":all:", f"{name}=={version}", "-d", str(into)]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise ReplicateError(f"pip download of {name}=={version} timed out") from exc
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise ReplicateError(f"cannot download the sdist of {name}=={version}: {tail}")
    found = sorted(p for p in into.iterdir() if p.name.endswith((".tar.gz", ".zip", ".tgz")))
    if not found:
        raise ReplicateError(f"pip download of {name}=={version} gave no sdist")
    return found[0]


def unpack(archive: Path, into: Path) -> Path:
    """`archive` (a tarball or zip) unpacked into `into`: the one folder it holds; no member
    lands outside it."""
    into.mkdir(parents=True)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.namelist():  # no absolute paths, no `..`
                if member.startswith("/") or ".." in Path(member).parts:
                    raise ReplicateError(f"{archive.name}: unsafe path {member!r}")
            zipped.extractall(into)
    else:
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(into, filter="data")  # no member lands outside `into`
        except tarfile.TarError as exc:
            raise ReplicateError(f"{archive.name}: unsafe or broken archive: {exc}") from None
    folders = [p for p in into.iterdir() if p.is_dir()]
    if len(folders) != 1 or any(p.is_file() for p in into.iterdir()):
        raise ReplicateError(f"{archive.name} does not unpack into one folder")
    return folders[0]


def commit_tree(tree: Path, message: str) -> None:
    """`tree` made a git repository of one commit, with a fixed identity and dates."""
    env = {**os.environ, **_FIXED}
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", message)):
        done = subprocess.run(
            [*_GIT, *args], cwd=tree, env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise ReplicateError(f"git {args[0]} failed in {tree.name}: {done.stderr.strip()}")
