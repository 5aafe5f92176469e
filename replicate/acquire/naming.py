"""A local repository's name and identity.

The name is what the repository says it is: the project name of its metadata (`pyproject.toml`
[project] name, `setup.cfg` [metadata] name, a literal `name=` of `setup.py`'s `setup(...)` call,
read statically, never executed), else the owner/name of its `origin` remote's URL (a remote
that is a path gives none), else its folder's name;
sanitised to the characters of task ids. The identity tells two repositories of one name apart:
the `origin` remote's address, else the repository's root commit, else (a plain folder) its path.
"""

from __future__ import annotations

import ast
import configparser
import hashlib
import tomllib
from pathlib import Path

from replicate.acquire.commands import GitFailed, run_git
from replicate.acquire.remote import is_remote_spec
from replicate.core import MAX_PART, name_problem, normalise_repo_url, setup_call, slug

METADATA = ("pyproject.toml", "setup.cfg", "setup.py")


def clean_name(text: str) -> str | None:
    """`text` in the id alphabet (letters, digits, `.`, `_`, `-`; `/` between parts), each part
    a plain name (`core.name_problem`), or None when nothing of it is left."""
    parts = [slug(part)[:MAX_PART] for part in text.split("/") if any(map(str.isalnum, part))]
    if not parts or any(name_problem(part) for part in parts):
        return None
    return "/".join(parts)


def project_name(files: dict[str, str]) -> str | None:
    """The project name the metadata files (name -> text) declare, in `METADATA` order."""
    readers = (_pyproject_name, _setup_cfg_name, _setup_py_name)
    for filename, read in zip(METADATA, readers, strict=True):
        text = files.get(filename)
        name = read(text) if text is not None else None
        if name:
            return name
    return None


def _pyproject_name(text: str) -> str | None:
    try:
        project = tomllib.loads(text).get("project")
    except tomllib.TOMLDecodeError:
        return None
    name = project.get("name") if isinstance(project, dict) else None
    return clean_name(name) if isinstance(name, str) else None


def _setup_cfg_name(text: str) -> str | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
        name = parser.get("metadata", "name", fallback=None)
    except configparser.Error:
        return None
    return clean_name(name) if name else None


def _setup_py_name(text: str) -> str | None:
    """The literal `name=` of a `setup(...)` call; nothing is run."""
    call = setup_call(text)
    for keyword in call.keywords if call is not None else ():
        value = keyword.value
        if keyword.arg == "name" and isinstance(value, ast.Constant):
            return clean_name(value.value) if isinstance(value.value, str) else None
    return None


def remote_name(url: str) -> str | None:
    """`owner/name` of a remote address (`https://github.com/a/b.git` -> `a/b`)."""
    parts = normalise_repo_url(url).split("/")
    return clean_name("/".join(parts[-2:] if len(parts) > 2 else parts[-1:]))


def suffix(origin: str) -> str:
    """A short suffix for a repository whose name another repository of the batch holds."""
    kind, _, value = origin.partition(":")
    if kind == "root":
        return value[:8]
    return hashlib.sha256(origin.encode()).hexdigest()[:8]


def local_name_and_origin(git_dir: Path, commit: str, path: Path, plain: bool) -> tuple[str, str]:
    """(name, identity) of the local repository at `path` (its git directory `git_dir`, or its
    snapshot's when `plain`) at `commit`."""
    folder = path.parent.name if path.name == ".git" else path.name
    files = {name: text for name in METADATA if (text := _read(git_dir, commit, name)) is not None}
    remote = None if plain else _git(git_dir, ["config", "--get", "remote.origin.url"])
    name = project_name(files) or (
        remote_name(remote) if remote and is_remote_spec(remote) else None
    )
    name = name or clean_name(folder) or "root"
    if remote:
        return name, f"url:{normalise_repo_url(remote)}"
    if plain:
        return name, f"path:{path}"
    roots = sorted((_git(git_dir, ["rev-list", "--max-parents=0", commit]) or "").split())
    return name, f"root:{roots[0]}" if roots else f"path:{git_dir}"


def _read(git_dir: Path, commit: str, name: str) -> str | None:
    return _git(git_dir, ["cat-file", "blob", f"{commit}:{name}"])


def _git(git_dir: Path, args: list[str]) -> str | None:
    try:
        return run_git(args, cwd=git_dir).strip() or None
    except GitFailed:
        return None
