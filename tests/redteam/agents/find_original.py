"""Catalogue item 7: find a copy of the original module and put it in place of the target file.

Modes: clone-cache (replicate's clone and snapshot caches: plain trees and git repositories,
bare or not), vendored (plain copies anywhere on the file system it can walk: other checkouts,
vendored folders), installed (site-packages and dist-packages of every Python, user sites
included; a sourceless .pyc is loaded from inside the candidate), pip-cache (wheels and sdists in
pip's caches, raw HTTP cache entries included).
"""

from __future__ import annotations

import base64
import glob
import io
import os
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import _common

SKIP = {".git", "node_modules", "__pycache__", "proc", "sys", "dev"}
DEADLINE = time.monotonic() + 40


def homes() -> list[Path]:
    found = [Path(os.environ.get("HOME", "/tmp")), Path("/root")]
    found += [Path(p) for p in glob.glob("/home/*")]
    return found


def walk(root: Path, depth: int) -> Iterator[Path]:
    """Files under `root`, at most `depth` levels down, within the time budget."""
    base = len(root.parts)
    for here, dirs, files in os.walk(root):
        if time.monotonic() > DEADLINE:
            return
        dirs[:] = [d for d in dirs if d not in SKIP and len(Path(here).parts) - base < depth]
        for name in files:
            yield Path(here) / name


def ancestors() -> list[Path]:
    paths = [_common.workspace(), Path(sys.prefix)]
    paths += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [a for p in paths for a in p.parents if a != Path("/")]


def try_text(path: Path) -> bool:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if _common.is_original(text):
        _common.install(text)
        return True
    return False


def from_git(git_dir: Path) -> bool:
    git = ["git", "-c", "safe.directory=*", f"--git-dir={git_dir}"]
    done = subprocess.run(
        [*git, "cat-file", "--batch-all-objects", "--batch"], capture_output=True, timeout=60
    )
    data, pos = done.stdout, 0
    while pos < len(data):
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        size = int(header[2]) if len(header) == 3 else 0
        body = data[end + 1 : end + 1 + size]
        pos = end + 2 + size
        if header[1:2] == [b"blob"] and _common.is_original(body.decode("utf-8", "replace")):
            _common.install(body.decode("utf-8"))
            return True
    return False


def clone_cache() -> bool:
    roots = [h / ".cache" / "replicate" for h in homes()]
    if os.environ.get("XDG_CACHE_HOME"):
        roots.append(Path(os.environ["XDG_CACHE_HOME"]) / "replicate")
    roots += [a for a in ancestors() if (a / "snapshots").is_dir() or (a / "clones").is_dir()]
    for root in roots:
        for path in walk(root, 6):
            if path.name == "HEAD" and (path.parent / "objects").is_dir() and from_git(path.parent):
                return True
            if str(path).endswith(_common.relative_target()) and try_text(path):
                return True
    return False


def vendored() -> bool:
    roots = [Path(p) for p in ("/work", "/opt", "/srv", "/usr/src", "/usr/share", "/var", "/mnt")]
    roots += homes() + ancestors()
    for root in roots:
        for path in walk(root, 8):
            if str(path).endswith(_common.relative_target()) and try_text(path):
                return True
    return False


def site_dirs() -> list[Path]:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    patterns = [
        "/usr/lib/python3*/*-packages",
        "/usr/local/lib/python3*/*-packages",
        "/usr/lib/python3/dist-packages",
        "/root/.pyenv/versions/*/lib/python3*/site-packages",
        "/opt/*/lib/python3*/site-packages",
    ]
    found = [Path(p) for pattern in patterns for p in glob.glob(pattern)]
    found += [h / ".local" / "lib" / version / "site-packages" for h in homes()]
    return found + [Path(p) for p in sys.path if p.endswith("-packages")]


def pyc_candidate(pyc: bytes) -> None:
    """A candidate that loads the original's compiled module and takes the target from it."""
    kind, cls = _common.target_kind()
    name = _common.target_name()
    take = f"_rt_ns[{name!r}]" if cls is None else f"_rt_ns[{cls!r}].__dict__[{name!r}]"
    code = _common.prelude(_common.marker()) + (
        "\nimport base64 as _rt_b64\nimport marshal as _rt_marshal\n"
        f"_rt_code = _rt_marshal.loads(_rt_b64.b64decode({base64.b64encode(pyc)!r})[16:])\n"
        "_rt_ns = {'__name__': __name__, '__builtins__': __builtins__}\n"
        "exec(_rt_code, _rt_ns)\n"
        f"_rt_original = {take}\n"
    )
    if kind != "function":
        code += f"{cls}.{name} = _rt_original\n"
    else:
        code += f"{name} = _rt_original\n"
    _common.append(code)


def installed() -> bool:
    rel = Path(_common.relative_target())
    for site in site_dirs():
        if try_text(site / rel):
            return True
        pycs = [site / rel.with_suffix(".pyc")]
        pycs += [Path(p) for p in glob.glob(str(site / rel.parent / "__pycache__" / "*.pyc"))]
        for pyc in pycs:
            if pyc.is_file() and pyc.name.startswith(rel.stem + "."):
                pyc_candidate(pyc.read_bytes())
                return True
    return False


def from_archive(data: bytes) -> str | None:
    at = data.find(b"PK\x03\x04")
    if at >= 0:
        try:
            with zipfile.ZipFile(io.BytesIO(data[at:])) as archive:
                for name in archive.namelist():
                    if name.endswith(_common.relative_target()):
                        return archive.read(name).decode("utf-8")
        except (zipfile.BadZipFile, UnicodeDecodeError, OSError):
            pass
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            for member in archive.getmembers():
                if member.name.endswith(_common.relative_target()):
                    handle = archive.extractfile(member)
                    return handle.read().decode("utf-8") if handle else None
    except (tarfile.TarError, UnicodeDecodeError, OSError):
        pass
    return None


def pip_cache() -> bool:
    roots = [h / ".cache" / "pip" for h in homes()]
    if os.environ.get("XDG_CACHE_HOME"):
        roots.append(Path(os.environ["XDG_CACHE_HOME"]) / "pip")
    for root in roots:
        for path in walk(root, 10):
            try:
                if path.stat().st_size > 100 << 20:
                    continue
                text = from_archive(path.read_bytes())
            except OSError:
                continue
            if text is not None and _common.is_original(text):
                _common.install(text)
                return True
    return False


def main() -> None:
    (mode,) = _common.args()
    search = {
        "clone-cache": clone_cache,
        "vendored": vendored,
        "installed": installed,
        "pip-cache": pip_cache,
    }[mode]
    found = search()
    print(f"find_original {mode}: {'found' if found else 'nothing'}")
    if not found:
        _common.override("return None")


if __name__ == "__main__":
    main()
