"""Where replicate keeps its caches (clones, snapshots, environments), and a lock for them."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


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
    """Hold an exclusive `flock` on `path` (created if missing) for the duration of the block.

    Serialises work on one cache entry across threads and processes of this machine.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
