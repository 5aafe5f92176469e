"""resolve_lock() and ensure_env() against PyPI with tiny packages (network)."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from replicate.envs import build
from replicate.envs.build import Env, Lock, ensure_env, env_hash, resolve_lock
from replicate.errors import InfraError


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("envcache")


@pytest.fixture(scope="module")
def lock(cache: Path) -> Lock:
    return resolve_lock(["six", "pytest"], cache)


@pytest.fixture(scope="module")
def env(lock: Lock, cache: Path) -> Env:
    return ensure_env(lock, cache)


def _names(lines: tuple[str, ...]) -> set[str]:
    return {line.split("==")[0] for line in lines}


def _python(env: Env, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(env.python), "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_lock_is_pinned_sorted_and_complete(lock: Lock) -> None:
    assert lock.python == build.python_version()
    assert lock.failed == ()
    assert list(lock.lines) == sorted(lock.lines)
    assert all("==" in line and line == line.lower() for line in lock.lines)
    assert {"six", "pytest", "iniconfig", "pluggy", "packaging"} <= _names(lock.lines)
    assert not {"pip", "setuptools", "wheel"} & _names(lock.lines)


def test_env_has_the_lock_and_no_installers(env: Env, lock: Lock, cache: Path) -> None:
    assert env.path == cache / "envs" / env_hash(lock)
    assert env.lock_hash == env_hash(lock)
    assert _python(env, "import six, pytest; print(six.__file__)").stdout.startswith(
        str(env.site_packages)
    )
    for module in ("pip", "setuptools"):
        done = _python(env, f"import {module}")
        assert done.returncode != 0
        assert "ModuleNotFoundError" in done.stderr
    assert not list(env.site_packages.rglob("*.pyc"))  # installed with --no-compile


def test_second_ensure_env_is_a_cache_hit(
    env: Env, lock: Lock, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_subprocess(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cache hit must not run anything")

    monkeypatch.setattr(build, "_run", no_subprocess)
    assert ensure_env(lock, cache) == env


def test_a_lock_is_reused_for_a_day_and_asked_again_after(
    lock: Lock, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []
    real = build._resolve

    def counted(wanted: list[str], cache: Path, timeout_s: float) -> Lock:
        asked.append(wanted)
        return real(wanted, cache, timeout_s)

    monkeypatch.setattr(build, "_resolve", counted)
    assert resolve_lock(["six", "pytest"], cache) == lock and asked == []  # the fixture's
    monkeypatch.setenv("PIP_INDEX_URL", "https://pypi.org/simple")  # pip settings are the key
    assert resolve_lock(["six", "pytest"], cache) == lock and len(asked) == 1
    monkeypatch.delenv("PIP_INDEX_URL")
    kept = build._resolved_path(cache, ["six", "pytest"])
    old = kept.stat().st_mtime - build.RESOLVED_FOR_S - 1
    os.utime(kept, (old, old))  # a day old: resolved again, and kept again
    assert resolve_lock(["six", "pytest"], cache) == lock and len(asked) == 2
    assert resolve_lock(["six", "pytest"], cache) == lock and len(asked) == 2
    kept.write_text("{not json")  # a broken file is resolved past, never trusted
    assert resolve_lock(["six", "pytest"], cache) == lock and len(asked) == 3


def test_unresolvable_requirement_is_reported_not_fatal(cache: Path) -> None:
    result = resolve_lock(["six", "replicate-no-such-package-zz9"], cache)
    assert _names(result.lines) == {"six"}
    assert [req for req, _ in result.failed] == ["replicate-no-such-package-zz9"]
    assert "replicate-no-such-package-zz9" in result.failed[0][1]
    assert "\n" not in result.failed[0][1]
    assert not build._resolved_path(cache, ["six", "replicate-no-such-package-zz9"]).exists()


def test_conflicting_pair_falls_back_to_greedy(cache: Path) -> None:
    result = resolve_lock(["six==1.16.0", "six==1.17.0"], cache)
    assert result.lines == ("six==1.16.0",)
    assert [req for req, _ in result.failed] == ["six==1.17.0"]


def test_empty_lock_and_wrong_python(cache: Path) -> None:
    assert resolve_lock([], cache) == Lock((), build.python_version(), ())
    with pytest.raises(InfraError, match=r"the lock is for Python 2\.7"):
        ensure_env(Lock(("six==1.17.0",), "2.7"), cache)


def test_concurrent_ensure_env_builds_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Path] = []
    real = build._make_venv

    def counting(path: Path, timeout: float) -> None:
        made.append(path)
        real(path, timeout)

    monkeypatch.setattr(build, "_make_venv", counting)
    empty = Lock((), build.python_version())
    results: list[Env] = []
    threads = [
        threading.Thread(target=lambda: results.append(ensure_env(empty, tmp_path)))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and len(set(results)) == 1
    assert made == [results[0].path]
    assert results[0].python.exists()
