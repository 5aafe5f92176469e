"""Where replicate keeps its caches (clones, snapshots, environments), and a lock for them."""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock


def cache_root() -> Path:
    """`$REPLICATE_CACHE` when set, else the platform's user cache folder for "replicate".

    The folder is not created here; callers create the sub-folders they use.
    """
    configured = os.environ.get("REPLICATE_CACHE", "").strip()
    if configured:
        return Path(configured).expanduser().absolute()
    import platformdirs

    return Path(platformdirs.user_cache_dir("replicate"))


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the duration of the block.

    Serialises work on one cache entry across threads and processes of this machine (filelock:
    one lock object per call, so two threads of one process exclude each other too).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path, thread_local=False, preserve_lock_file=True):
        yield


def staging_beside(dest: Path) -> Path:
    """A new empty folder beside `dest` to build it in, then rename into place.  Call it holding
    `dest`'s lock: the folders an earlier build of `dest` left (a process killed mid-download or
    mid-clone) are removed first, as nobody else can be building it."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in glob.glob(f"{glob.escape(str(dest))}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{dest.name}.tmp-", dir=dest.parent))


def publish(data: bytes, final: Path) -> Path:
    """Write `final` atomically, readable by every user (a jail may run under another uid); a
    concurrent writer writes the same bytes or its own whole file."""
    final.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{final.name}", dir=final.parent)
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.chmod(temp, 0o644)
    os.replace(temp, final)
    return final
