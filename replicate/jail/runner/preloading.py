"""What a session imports before its first child: the modules a fresh import of the target
runs that cannot reach the target, each kept only if a trial in a child shows it clean (no
exception, no thread, nothing drawn from ``random``); the target's packages made without
running them and handed back to each child."""

from __future__ import annotations

import _thread
import builtins
import importlib
import importlib.machinery
import os
import select
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

from .base import _GET_RANDOM_STATE, _SET_RANDOM_STATE, _import_module, _os_exit, _sys_modules
from .processes import _tidy

if TYPE_CHECKING:
    from .base import wire

globals()["__builtins__"] = dict(builtins.__dict__)  # see base


_PRELOAD_S = 20.0  # the trial's limit: past it, nothing is preloaded
_MADE: list[tuple[str, Any, Any]] = []  # (name, module, loader): the target's packages


class _Blocked:
    """A meta path finder that refuses the target's module while the session preloads."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == self.name:
            raise ImportError(f"{name} is not imported before a session's children")


class _MadeLoader:
    """A package made at preload: its own object, its ``__init__`` run by its loader."""

    def __init__(self, module: Any, loader: Any) -> None:
        self.module, self.loader = module, loader

    def create_module(self, spec: Any) -> Any:
        return self.module

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # resources and the rest: the real loader's
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)


class _MadePackages:
    """A meta path finder that gives each preloaded package back to a child's import."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> Any:
        for made, module, loader in _MADE:
            if made == name:
                spec = importlib.machinery.ModuleSpec(
                    name,
                    _MadeLoader(module, loader),  # type: ignore[arg-type]
                    origin=module.__spec__.origin,
                )
                spec.submodule_search_locations = module.__spec__.submodule_search_locations
                spec.has_location = module.__spec__.has_location
                return spec
        return None


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return _thread._count() + 1


def _import_kept(preload: wire.Preload, names: list[str]) -> list[str]:
    """Import the target's packages (made, not run) and then `names`, undoing each that fails
    the checks; the names kept."""
    for name in preload["packages"]:
        parent = _sys_modules.get(name.rpartition(".")[0])
        spec = importlib.machinery.PathFinder.find_spec(name, getattr(parent, "__path__", None))
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return []
        module = importlib.util.module_from_spec(spec)
        _sys_modules[name] = module
        _MADE.append((name, module, spec.loader))
    kept: list[str] = []
    for name in names:
        before, state, threads = set(_sys_modules), _GET_RANDOM_STATE(), _threads()
        try:
            _import_module(name)
            clean = _GET_RANDOM_STATE() == state and _threads() == threads
        except Exception:  # noqa: BLE001 - a module that cannot come first is left to the child
            clean = False
        if clean:
            kept.append(name)
        else:
            _SET_RANDOM_STATE(state)
            _undo([n for n in _sys_modules if n not in before])
    return kept


def _undo(names: list[str]) -> None:
    """Forget the modules `names` (and their parents' attributes for them): a module that
    failed a check, and every module its import brought in, which a later one would otherwise
    find imported (a module that draws from `random`, say, imported by a clean one)."""
    for name in names:
        module = _sys_modules.pop(name, None)
        if module is None:
            continue
        parent, _, leaf = name.rpartition(".")
        holder = _sys_modules.get(parent)
        if holder is not None and getattr(holder, leaf, None) is module:
            delattr(holder, leaf)


def _preload(preload: wire.Preload | None, requests_fd: int, own_pids: bool) -> None:
    """Import what the trial in a child kept, in the session's own process (see above)."""
    if not preload or not preload.get("modules"):
        return
    import importlib.util  # noqa: F401 - a session's only, for module_from_spec

    blocked = _Blocked(str(preload["target"]))
    sys.meta_path.insert(0, blocked)
    try:
        kept = _trial(preload, requests_fd, own_pids)
        if kept:
            _import_kept(preload, kept)
    finally:
        sys.meta_path.remove(blocked)
    if _MADE:
        sys.meta_path.insert(0, _MadePackages())


def _trial(preload: wire.Preload, requests_fd: int, own_pids: bool) -> list[str]:
    """The modules a child could import cleanly, in order; [] when it failed or was late."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(requests_fd)
            os.close(read_fd)
            kept = _import_kept(preload, list(preload["modules"]))
            os.write(write_fd, "\n".join(kept).encode())
        finally:
            _os_exit(0)
    os.close(write_fd)
    data = b""
    deadline = time.monotonic() + _PRELOAD_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([read_fd], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(read_fd, 1 << 16) if ready else b""
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read_fd)
        try:  # noqa: SIM105 - as above
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
        os.waitpid(pid, 0)
        _tidy(own_pids)
    names = set(preload["modules"])
    return [name for name in data.decode("utf-8", "replace").split("\n") if name in names]


def _with_made_packages() -> None:
    """In a child: the preloaded packages out of `sys.modules`, so the target's import runs
    their ``__init__`` (`_MadePackages` gives back their objects)."""
    for name, _, _ in _MADE:
        _sys_modules.pop(name, None)
