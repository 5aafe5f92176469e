"""Resolve requirements to a lock and build cached environments from it (the adapter that runs
uv or pip).

Environments are plain venvs made with `--without-pip`; the installer runs from outside with
`--python <env python>`, so neither pip nor setuptools lands in an environment unless the lock
lists them.  uv resolves and installs where it is there, given pip's configuration
(`replicate.envs.with_uv`); pip where it is not, where uv fails, and for a set of requirements
that does not resolve whole (pip's errors name the requirements to leave out).
"""

from __future__ import annotations

import functools
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
from replicate.envs.with_uv import (
    compile_args,
    compiled_lines,
    install_args,
    installer_choice,
    pip_settings,
    uv_binary,
    uv_env,
    uv_sources,
)
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


def _run(
    args: list[str],
    timeout: float,
    what: str,
    env: dict[str, str] | None = None,
    feed: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """`args` run to the end (`feed` on its stdin), in pip's environment unless `env`."""
    if timeout <= 0:
        raise InfraError(f"{what}: out of time")
    stdin = {"input": feed} if feed is not None else {"stdin": subprocess.DEVNULL}
    try:
        return subprocess.run(
            args,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_pip_env() if env is None else env,
            check=False,
            **stdin,
        )
    except subprocess.TimeoutExpired as exc:
        raise InfraError(f"{what}: timed out after {timeout:g} s") from exc
    except OSError as exc:
        raise InfraError(f"{what}: {exc}") from exc


@dataclass(frozen=True)
class _Uv:
    """uv, the flags that give it pip's configuration, and the environment it runs in."""

    binary: str
    flags: tuple[str, ...]
    env: dict[str, str]


def _uv() -> _Uv | None:
    """uv where it does the work (`REPLICATE_INSTALLER` is not pip, uv is installed and can be
    given pip's configuration); else None, and pip does it."""
    choice = installer_choice(os.environ)
    found = uv_binary() if choice != "pip" else None
    sources = uv_sources(_pip_config(_pip_variables())) if found is not None else None
    if found is None or sources is None:
        if choice == "uv":
            why = "is not installed" if found is None else "cannot be given pip's configuration"
            raise InfraError(f"REPLICATE_INSTALLER=uv, but uv {why}")
        return None
    flags, extra = sources
    return _Uv(found, tuple(flags), uv_env(_pip_env(), extra))


def _pip_variables() -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("PIP_")))


@functools.lru_cache(maxsize=8)
def _pip_config(variables: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """pip's settings for an install (`pip config list`), once per process and ``PIP_``
    variables; a pip that cannot list them counts as one with a setting uv cannot be given."""
    done = _run([str(base_python()), "-m", "pip", "config", "list"], 60, "cannot read pip's config")
    if done.returncode != 0:
        return {"unreadable": done.stderr.strip()[-200:]}
    return pip_settings(done.stdout)


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
    every gen).  uv resolves where it can (`_uv_resolve`); pip where it cannot or fails.
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
    """Where the lock of `wanted` is kept: by the requirements, the interpreter, every ``PIP_``
    setting that could change what pip finds (its index, say) and the installer setting."""
    pip = list(_pip_variables())
    tool = installer_choice(os.environ)
    key = json.dumps([list(wanted), str(base_python()), python_version(), pip, tool])
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
    quick = _uv_resolve(resolver, wanted, deadline)
    if quick:
        return Lock(quick, python_version(), ())
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


def _uv_resolve(resolver: Path, wanted: list[str], deadline: float) -> tuple[str, ...]:
    """The lock lines uv resolves `wanted` to; none where uv is not used or the whole set does
    not resolve (pip then finds what to leave out)."""
    uv = _uv()
    if uv is None:
        return ()
    args = compile_args(uv.binary, str(resolver / "bin" / "python"), uv.flags)
    feed = "".join(f"{req}\n" for req in wanted)
    done = _run(args, deadline - time.monotonic(), "cannot resolve requirements", uv.env, feed)
    return compiled_lines(done.stdout) if done.returncode == 0 else ()


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
    if not lines or _uv_install(python, lines, deadline):
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


def _uv_install(python: Path, lines: Sequence[str], deadline: float) -> bool:
    """Install `lines` with uv (wheels only, then sources allowed, as pip below); False where
    uv is not used or failed (pip then installs them)."""
    uv = _uv()
    if uv is None:
        return False
    for binary_only in (True, False):
        args = [*install_args(uv.binary, str(python), uv.flags, binary_only), *lines]
        done = _run(args, deadline - time.monotonic(), "cannot install environment", uv.env)
        if done.returncode == 0:
            return True
    return False
