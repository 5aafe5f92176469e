"""Write the files of a pinned commit to a folder (no `.git`), byte-exact."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import git

from replicate.acquire.git import AcquiredRepo
from replicate.errors import ReplicateError

_LINK = 0o120000
_SUBMODULE = 0o160000
_EXEC = 0o100755


def export_tree(repo: AcquiredRepo, dest: Path) -> None:
    """Write every file of `repo.commit` under `dest` (created if missing).

    Content is taken from the object store as is: no `export-subst`, `export-ignore`, eol or
    filter attributes apply. Files get mode 0755 (git mode 100755) or 0644. Symlinks are kept as
    symlinks when they resolve inside `dest`; links that point outside it (absolute targets,
    `..` escapes, chains through other links) are dropped. Submodules become empty folders.
    """
    dest.mkdir(parents=True, exist_ok=True)
    links: list[tuple[Path, str]] = []
    try:
        handle = git.Repo(repo.git_dir)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise ReplicateError(f"not a git repository: {repo.git_dir}") from exc
    # A bare repository without a `config` file looks non-bare to gitpython, which would then
    # run git in the parent folder: pin the git directory explicitly.
    handle.git.update_environment(GIT_DIR=str(repo.git_dir))
    try:
        tree = handle.commit(repo.commit).tree
        for item in tree.traverse():
            if not isinstance(item, git.Blob | git.Tree | git.Submodule):
                continue
            path = _safe_path(dest, str(item.path))
            if path is None:
                continue
            if isinstance(item, git.Tree | git.Submodule) or item.mode == _SUBMODULE:
                path.mkdir(parents=True, exist_ok=True)
                continue
            data = item.data_stream.read()
            if item.mode == _LINK:
                links.append((path, os.fsdecode(data)))
            else:
                _write_file(path, data, executable=item.mode == _EXEC)
    except (ValueError, git.BadName, git.GitCommandError) as exc:
        raise ReplicateError(f"cannot export {repo.commit} of {repo.url}: {exc}") from exc
    finally:
        handle.close()
    _make_links(dest, links)


def _safe_path(dest: Path, rel: str) -> Path | None:
    parts = PurePosixPath(rel).parts
    if not parts or any(p in ("", ".", "..") or p.lower() == ".git" for p in parts):
        return None
    if PurePosixPath(rel).is_absolute():
        return None
    return dest.joinpath(*parts)


def _write_file(path: Path, data: bytes, *, executable: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()
    path.write_bytes(data)
    path.chmod(0o755 if executable else 0o644)


def _make_links(dest: Path, links: list[tuple[Path, str]]) -> None:
    """Create the links that point inside `dest`, then drop any whose resolution leaves it."""
    root = dest.resolve()
    made: list[Path] = []
    for path, target in links:
        if os.path.isabs(target) or not _inside(root, path.parent.resolve() / target, lexical=True):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.is_file():
            path.unlink()
        os.symlink(target, path)
        made.append(path)
    changed = True
    while changed:
        changed = False
        for path in list(made):
            if not _inside(root, Path(os.path.realpath(path)), lexical=False):
                path.unlink()
                made.remove(path)
                changed = True


def _inside(root: Path, candidate: Path, *, lexical: bool) -> bool:
    normal = Path(os.path.normpath(candidate)) if lexical else candidate
    return normal == root or root in normal.parents
