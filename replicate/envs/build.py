"""Resolve requirements to a lock and build cached environments from it (the adapter that runs pip).

Environments are plain venvs made with `--without-pip`; pip runs from the base interpreter with
`--python <env python>`, so neither pip nor setuptools lands in an environment unless the lock
lists them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.utils import canonicalize_name

from replicate.cache import file_lock, publish
from replicate.envs.pipout import culprits, error_line
from replicate.errors import InfraError
from replicate.scratch import temporary_dir

VENV_TIMEOUT_S = 300.0
INSTALL_TIMEOUT_S = 1800.0
_MARKER = ".replicate-complete"
_SCRUBBED = ("PYTHONPATH", "PYTHONHOME", "PIP_USER", "PIP_TARGET", "PIP_PREFIX", "PIP_ROOT")


@dataclass(frozen=True)
class Lock:
    """Pinned `name==version` lines (sorted, normalised names) for one Python minor version;
    `failed` holds requirements left out, each with a one-line reason."""

    lines: tuple[str, ...]
    python: str
    failed: tuple[tuple[str, str], ...] = ()


def lock_without(lock: Lock, names: Iterable[str]) -> tuple[Lock, tuple[str, ...]]:
    """The lock minus the named distributions (normalised names); also the lines removed."""
    drop = {canonicalize_name(n) for n in names}
    kept = tuple(line for line in lock.lines if canonicalize_name(line.split("==")[0]) not in drop)
    removed = tuple(line for line in lock.lines if line not in kept)
    return replace(lock, lines=kept), removed


@dataclass(frozen=True)
class Env:
    """A built environment: its folder, interpreter, site-packages and the hash of its lock."""

    path: Path
    python: Path
    site_packages: Path
    lock_hash: str


@dataclass(frozen=True)
class _Resolution:
    ok: bool
    lines: tuple[str, ...]
    stderr: str


def base_python() -> Path:
    """The base interpreter (outside any venv) that runs pip and seeds environments."""
    exe = Path(getattr(sys, "_base_executable", "") or sys.executable)
    if sys.prefix != sys.base_prefix and Path(sys.prefix) in exe.absolute().parents:
        minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
        for candidate in (minor, "python3", "python"):
            path = Path(sys.base_prefix) / "bin" / candidate
            if path.exists():
                return path
    return exe


def python_version() -> str:
    """`major.minor` of the base interpreter (the one running us)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _pip_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env.update({"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"})
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(args: list[str], timeout: float, what: str) -> subprocess.CompletedProcess[str]:
    if timeout <= 0:
        raise InfraError(f"{what}: out of time")
    try:
        return subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_pip_env(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InfraError(f"{what}: timed out after {timeout:g} s") from exc
    except OSError as exc:
        raise InfraError(f"{what}: {exc}") from exc


def _make_venv(path: Path, timeout: float) -> None:
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    args = [str(base_python()), "-m", "venv", "--without-pip", str(path)]
    done = _run(args, timeout, f"cannot create venv {path}")
    if done.returncode != 0:
        raise InfraError(f"cannot create venv {path}: {error_line(done.stderr)}")


def _write_marker(path: Path, payload: dict[str, object]) -> None:
    tmp = path / f"{_MARKER}.tmp"
    tmp.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    os.replace(tmp, path / _MARKER)


def _resolver_env(cache: Path) -> Path:
    """An empty venv (cached) that pip resolves against, so nothing counts as installed."""
    digest = hashlib.sha256(str(base_python()).encode()).hexdigest()[:8]
    path = cache / "resolver" / f"py{python_version()}-{digest}"
    if (path / _MARKER).is_file():
        return path
    with file_lock(path.with_name(path.name + ".lock")):
        if not (path / _MARKER).is_file():
            _make_venv(path, VENV_TIMEOUT_S)
            _write_marker(path, {"python": python_version()})
    return path


def _dry_run(resolver: Path, reqs: Sequence[str], deadline: float) -> _Resolution:
    with temporary_dir("replicate-pip-") as tmp:
        report = Path(tmp) / "report.json"
        args = [str(base_python()), "-m", "pip", "--python", str(resolver / "bin" / "python")]
        args += ["install", "--dry-run", "--ignore-installed", "--quiet", "--report"]
        args += [str(report), *reqs]
        done = _run(args, deadline - time.monotonic(), "cannot resolve requirements")
        if "No module named pip" in done.stderr:
            raise InfraError(f"pip is not available to {base_python()}")
        if done.returncode != 0 or not report.is_file():
            return _Resolution(False, (), done.stderr)
        try:
            data = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InfraError(f"cannot read pip's report: {exc}") from exc
    return _Resolution(True, _report_lines(data), done.stderr)


def _report_lines(data: dict[str, object]) -> tuple[str, ...]:
    lines: list[str] = []
    items = data.get("install")
    for item in items if isinstance(items, list) else []:
        meta = item.get("metadata", {})
        name = canonicalize_name(str(meta.get("name", "")))
        if item.get("is_direct"):
            lines.append(f"{name} @ {item.get('download_info', {}).get('url', '')}")
        else:
            lines.append(f"{name}=={meta.get('version', '')}")
    return tuple(sorted(set(lines)))


RESOLVED_FOR_S = 24 * 3600.0  # a resolution is reused this long (the index may gain releases)


def resolve_lock(reqs: Sequence[str], cache: Path, timeout_s: float = 900) -> Lock:
    """Resolve `reqs` (PEP 508 strings) to pinned lines without installing anything.

    When the whole set does not resolve, requirements pip names as unavailable are dropped; if
    it still fails, requirements are added one by one and kept when the set still resolves.
    A lock that left nothing out is reused for the same requirements, interpreter and pip
    settings for `RESOLVED_FOR_S` (pip's resolver, even on its own cache, took ~0.7 s of
    every gen).
    """
    wanted = list(dict.fromkeys(r.strip() for r in reqs if r.strip()))
    if not wanted:
        return Lock((), python_version(), ())
    kept = _resolved_path(cache, wanted)
    lock = _kept_lock(kept)
    if lock is None:
        lock = _resolve(wanted, cache, timeout_s)
        if not lock.failed:  # one left out may be the index failing: asked again next time
            publish(json.dumps({"lines": lock.lines, "python": lock.python}).encode(), kept)
    return lock


def _resolved_path(cache: Path, wanted: Sequence[str]) -> Path:
    """Where the lock of `wanted` is kept: by the requirements, the interpreter and every
    ``PIP_`` setting that could change what pip finds (its index, say)."""
    pip = sorted((k, v) for k, v in os.environ.items() if k.startswith("PIP_"))
    key = json.dumps([list(wanted), str(base_python()), python_version(), pip])
    return cache / "locks" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"


def _kept_lock(path: Path) -> Lock | None:
    """The lock kept at `path`, if it is younger than `RESOLVED_FOR_S` and well formed."""
    try:
        if time.time() - path.stat().st_mtime > RESOLVED_FOR_S:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
        return Lock(tuple(str(line) for line in data["lines"]), str(data["python"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _resolve(wanted: list[str], cache: Path, timeout_s: float) -> Lock:
    deadline = time.monotonic() + timeout_s
    resolver = _resolver_env(cache)
    outcome = _dry_run(resolver, wanted, deadline)
    failed: list[tuple[str, str]] = []
    while not outcome.ok:
        named = culprits(outcome.stderr, wanted)
        if not named:
            break
        failed += [(r, error_line(outcome.stderr)) for r in named]
        wanted = [r for r in wanted if r not in named]
        outcome = _dry_run(resolver, wanted, deadline)
    if not outcome.ok:
        outcome, more = _greedy(resolver, wanted, deadline)
        failed += more
    return Lock(outcome.lines, python_version(), tuple(failed))


def _greedy(
    resolver: Path, wanted: list[str], deadline: float
) -> tuple[_Resolution, list[tuple[str, str]]]:
    accepted: list[str] = []
    best = _Resolution(True, (), "")
    failed: list[tuple[str, str]] = []
    for req in wanted:
        trial = _dry_run(resolver, [*accepted, req], deadline)
        if trial.ok:
            accepted.append(req)
            best = trial
        else:
            failed.append((req, error_line(trial.stderr)))
    return best, failed


def env_hash(lock: Lock) -> str:
    """16 hex digits naming the environment of `lock` for this base interpreter."""
    text = "\n".join([lock.python, str(base_python()), *lock.lines])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def ensure_env(lock: Lock, cache: Path, timeout_s: float = INSTALL_TIMEOUT_S) -> Env:
    """The environment for `lock` under `cache/envs/`, built once (in place, under a file lock)
    and reused; concurrent callers for the same lock wait for one build."""
    if lock.python != python_version():
        raise InfraError(f"the lock is for Python {lock.python}, this is Python {python_version()}")
    digest = env_hash(lock)
    path = cache / "envs" / digest
    env = Env(
        path=path,
        python=path / "bin" / "python",
        site_packages=path / "lib" / f"python{lock.python}" / "site-packages",
        lock_hash=digest,
    )
    if (path / _MARKER).is_file():
        return env
    with file_lock(path.with_name(digest + ".lock")):
        if not (path / _MARKER).is_file():
            deadline = time.monotonic() + timeout_s
            _make_venv(path, min(VENV_TIMEOUT_S, timeout_s))
            _install(env.python, lock.lines, deadline)
            _write_marker(path, {"python": lock.python, "lines": list(lock.lines)})
    return env


def _install(python: Path, lines: Sequence[str], deadline: float) -> None:
    if not lines:
        return
    base = [str(base_python()), "-m", "pip", "--python", str(python), "install", "--no-deps"]
    base += ["--no-compile", "--no-warn-script-location", "--quiet"]
    what = "cannot install environment"
    done = _run([*base, "--only-binary", ":all:", *lines], deadline - time.monotonic(), what)
    if done.returncode == 0:
        return
    done = _run([*base, *lines], deadline - time.monotonic(), what)
    if done.returncode != 0:
        raise InfraError(f"{what}: {error_line(done.stderr)}")
