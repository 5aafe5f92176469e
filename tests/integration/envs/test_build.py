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


def _calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every command `build` runs from now on, recorded."""
    seen: list[list[str]] = []
    real = build._run

    def recorded(args: list[str], *rest: object, **kwargs: object) -> object:
        seen.append(args)
        return real(args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "_run", recorded)
    return seen


def _by_pip(args: list[str], command: str) -> bool:
    return args[1:3] == ["-m", "pip"] and command in args


def _by_uv(args: list[str], command: str) -> bool:
    return args[1:3] == ["pip", command] and args[0] == build.uv_binary()


def _files(env: Env) -> dict[str, bytes]:
    """The environment's installed files but the installers' own notes (INSTALLER, uv's cache)."""
    return {
        str(path.relative_to(env.site_packages)): path.read_bytes()
        for path in env.site_packages.rglob("*")
        if path.is_file() and path.name not in ("INSTALLER", "RECORD", "REQUESTED", "uv_cache.json")
    }


def test_uv_and_pip_give_the_same_lock_and_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built = {}
    for tool in ("uv", "pip"):
        monkeypatch.setenv("REPLICATE_INSTALLER", tool)
        calls = _calls(monkeypatch)
        lock = resolve_lock(["pytest", "attrs"], tmp_path / tool)
        built[tool] = (lock, _files(ensure_env(lock, tmp_path / tool)))
        other = _by_pip if tool == "uv" else _by_uv
        assert not [c for c in calls if other(c, "install") or other(c, "compile")]
    assert built["uv"][0] == built["pip"][0] and built["uv"][0].failed == ()
    assert built["uv"][1] == built["pip"][1] and "attr/__init__.py" in built["uv"][1]


def test_uv_does_the_work_where_it_is_installed_and_pip_where_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("REPLICATE_INSTALLER", raising=False)
    calls = _calls(monkeypatch)
    ensure_env(resolve_lock(["six"], tmp_path / "auto"), tmp_path / "auto")
    assert [c for c in calls if _by_uv(c, "compile")] and [c for c in calls if _by_uv(c, "install")]
    assert not [c for c in calls if _by_pip(c, "install")]  # neither pip's dry run nor its install
    monkeypatch.setattr(build, "uv_binary", lambda: None)  # a machine without uv
    calls.clear()
    ensure_env(resolve_lock(["six"], tmp_path / "no-uv"), tmp_path / "no-uv")
    assert [c for c in calls if _by_pip(c, "--dry-run")] and [
        c for c in calls if _by_pip(c, "install")
    ]
    monkeypatch.setenv("REPLICATE_INSTALLER", "uv")
    with pytest.raises(InfraError, match=r"^REPLICATE_INSTALLER=uv, but uv is not installed$"):
        resolve_lock(["six"], tmp_path / "asked")


def test_a_set_uv_cannot_resolve_goes_to_pip_which_names_what_to_leave_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _calls(monkeypatch)
    result = resolve_lock(["six", "replicate-no-such-package-zz9"], tmp_path)
    assert [c for c in calls if _by_uv(c, "compile")]  # tried first
    assert [req for req, _ in result.failed] == ["replicate-no-such-package-zz9"]
    assert _names(result.lines) == {"six"}


def test_uv_is_held_to_the_constraints_pip_is_configured_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "constraints.txt").write_text("six<1.17\n")
    monkeypatch.setenv("PIP_CONSTRAINT", str(tmp_path / "constraints.txt"))
    monkeypatch.setenv("REPLICATE_INSTALLER", "uv")
    assert resolve_lock(["six"], tmp_path / "held").lines == ("six==1.16.0",)
    # The control: uv told nothing of pip's configuration picks the newest release.
    real = build.uv_sources
    monkeypatch.setattr(build, "uv_sources", lambda settings: real({}))
    monkeypatch.setenv("PIP_NO_COLOR", "1")  # another key for the kept lock and pip's settings
    newest = resolve_lock(["six"], tmp_path / "free").lines
    assert len(newest) == 1 and newest != ("six==1.16.0",)
