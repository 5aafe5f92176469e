"""Copies of the original planted where a user's machine keeps them, so the searching attacks can
first be shown to work outside the sandbox: a clone cache, pip's HTTP cache, a sourceless
install in the user site, a checkout in the home folder, a package index on loopback, and a
workspace whose git history holds the original (the way a naive harness makes one)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import py_compile
import shutil
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from replicate.batch.store import LoadedTask
from replicate.grading.grader import stubbed_source

GIT = ("git", "-c", "user.name=rt", "-c", "user.email=rt@localhost", "-c", "safe.directory=*")
PACKAGE = "samplelib"
VERSION = "0.3.0"


def _package_dir(tree: Path) -> Path:
    return tree / "src" / PACKAGE


def wheel(tree: Path) -> bytes:
    """A wheel of the original package, built by hand (no build backend needed)."""
    buffer = io.BytesIO()
    info = f"{PACKAGE}-{VERSION}.dist-info"
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(_package_dir(tree).glob("*.py")):
            archive.write(path, f"{PACKAGE}/{path.name}")
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {PACKAGE}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n")
        archive.writestr(f"{info}/RECORD", "")
    return buffer.getvalue()


def git_commit_all(repo: Path, message: str) -> None:
    subprocess.run([*GIT, "add", "-A", "--force"], cwd=repo, check=True, capture_output=True)
    subprocess.run([*GIT, "commit", "-q", "-m", message], cwd=repo, check=True)


def home_checkout(home: Path, tree: Path) -> Path:
    """A plain checkout of the original in the user's home folder (~/src/samplelib)."""
    checkout = home / "src" / PACKAGE
    shutil.copytree(tree, checkout)
    return checkout


def clone_cache(home: Path, tree: Path) -> Path:
    """A bare snapshot repository of the original under ~/.cache/replicate/snapshots/."""
    work = home.parent / "snapshot-work"
    shutil.copytree(tree, work)
    subprocess.run([*GIT, "init", "-q"], cwd=work, check=True)
    git_commit_all(work, "snapshot")
    bare = home / ".cache" / "replicate" / "snapshots" / "5a3c0ffee0000000"
    bare.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([*GIT, "clone", "-q", "--bare", str(work), str(bare)], check=True)
    shutil.rmtree(work)
    return bare


def pip_cache(home: Path, tree: Path) -> Path:
    """The wheel as a raw entry of pip's HTTP cache (~/.cache/pip/http-v2/...)."""
    data = wheel(tree)
    digest = hashlib.sha224(data).hexdigest()
    body = home / ".cache" / "pip" / "http-v2" / "/".join(digest[:5]) / f"{digest}.body"
    body.parent.mkdir(parents=True, exist_ok=True)
    body.write_bytes(data)
    return body


def user_site_sourceless(home: Path, tree: Path) -> Path:
    """A sourceless install (legacy .pyc files only) in the user site-packages."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = home / ".local" / "lib" / version / "site-packages" / PACKAGE
    site.mkdir(parents=True, exist_ok=True)
    for path in sorted(_package_dir(tree).glob("*.py")):
        py_compile.compile(str(path), cfile=str(site / (path.stem + ".pyc")), doraise=True)
    return site


def git_history_workspace(task: LoadedTask, dest: Path) -> Path:
    """A naive workspace: the repository committed as it is, then the stub committed on top."""
    shutil.copytree(task.repo.tree, dest)
    subprocess.run([*GIT, "init", "-q"], cwd=dest, check=True)
    git_commit_all(dest, "original")
    (dest / task.hidden.target.path).write_bytes(stubbed_source(task))
    (dest / "TASK.md").write_text(task.prompt, encoding="utf-8")
    git_commit_all(dest, "task")
    return dest


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        return


@contextmanager
def package_index(root: Path, tree: Path) -> Iterator[str]:
    """A PEP 503 simple index on 127.0.0.1 serving the original's wheel; yields its URL."""
    name = f"{PACKAGE}-{VERSION}-py3-none-any.whl"
    (root / "packages").mkdir(parents=True, exist_ok=True)
    (root / "packages" / name).write_bytes(wheel(tree))
    page = root / "simple" / PACKAGE / "index.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(f'<a href="../../packages/{name}">{name}</a>\n', encoding="utf-8")
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()
