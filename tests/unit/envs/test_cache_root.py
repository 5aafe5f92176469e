"""replicate.cache: the cache folder and the file lock."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from replicate.cache import cache_root, file_lock


def test_cache_root_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REPLICATE_CACHE", str(tmp_path / "c"))
    assert cache_root() == tmp_path / "c"
    monkeypatch.delenv("REPLICATE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "replicate"


def test_file_lock_excludes_other_holders(tmp_path: Path) -> None:
    events: list[str] = []

    def hold(name: str) -> None:
        with file_lock(tmp_path / "x.lock"):
            events.append(f"{name} in")
            time.sleep(0.05)
            events.append(f"{name} out")

    threads = [threading.Thread(target=hold, args=(n,)) for n in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert events[0].endswith("in") and events[1] == events[0].replace("in", "out")
