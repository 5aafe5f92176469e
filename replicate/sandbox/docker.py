"""The `docker` sandbox: one throw-away container per request, through the docker SDK.

The container starts from the base image (`docker_image.BASE_IMAGE`, a minimal Debian root) and
is shown the same base-system view as the `local` sandbox (`system_view()`: the host's `/usr`
programs and libraries, a few `/etc` files, the interpreter and its standard library, every Python
package folder covered by an empty folder) plus the request's mounts, all at their host paths, so
one `SandboxRequest` runs unchanged on both backends.  Isolation: no network (`network_mode=none`;
the host's network when the request asks for it), a read-only root, all capabilities dropped,
`no-new-privileges`, a wrapper shell as pid 1 (the command is its child; the whole tree dies with
it), pids / memory / address-space / file-size limits, a size-capped tmpfs on /tmp and /dev/shm,
and an unprivileged user: ours when we are not root, else 65534 (nobody), to whom writable mounts
are lent for the run.  Read-only mounts must be readable by that user.  The container is removed
(force) before `run` returns; a timeout kills it first.

The command runs under a small `sh` wrapper: outputs to the FIFOs of `docker_io`, fd 3 on the
channel FIFO when asked, stdin from a file, `cd` to the working directory (a failure there is an
`InfraError`, as are engine errors), then `env -i` with exactly the requested environment.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from replicate.errors import InfraError
from replicate.sandbox.base import (
    Limits,
    Mount,
    SandboxRequest,
    SandboxResult,
    SandboxUnavailable,
)
from replicate.sandbox.bwrap import DEFAULT_TMPFS_MB, check_mounts
from replicate.sandbox.docker_image import BASE_IMAGE
from replicate.sandbox.docker_io import IO_DIR, Captured, IoDir, Owner, lend
from replicate.sandbox.system import SystemView, system_view

SETUP_HINT = "run scripts/docker-setup.sh"
NOBODY: Owner = (65534, 65534)
LABEL = "org.replicate.sandbox"
INIT_PROCESSES = 1  # the wrapper shell stays pid 1 (see WRAPPER)
WAIT_MARGIN_S = 120.0
ENV_BINARY = "/usr/bin/env"
SHELL = "/bin/sh"
# First stage, pid 1: streams, working directory, "started" mark, then the command as its child
# (pid 1 ignores signals it has no handler for, even SIGKILL from inside: `kill -9 $$` must work;
# `exit` keeps sh from exec-ing the command in its place; engine's docker-init is not used, as the
# host's /usr/sbin shown over the image hides it).
WRAPPER = (
    f"exec <{IO_DIR}/stdin >{IO_DIR}/stdout 2>{IO_DIR}/stderr {{channel}}; {{limit}}"
    f'cd -- "$1" || exit 1; shift; printf x >{IO_DIR}/status; "$@"; exit $?'
)
# Last stage, after `env -i`: sh exports PWD by itself; drop it, or set the requested value.
DROP_PWD = 'unset PWD; exec "$@"'
SET_PWD = 'PWD=$0; export PWD; exec "$@"'


@dataclass(frozen=True)
class RunPlan:
    """Everything `containers.create` needs apart from the image, user and label."""

    command: tuple[str, ...]
    mounts: tuple[Mount, ...]
    tmpfs: dict[str, str]
    options: dict[str, Any]
    output_cap: int


class DockerSandbox:
    """Runs each request in a fresh container of `image`."""

    name = "docker"
    isolated = True

    def __init__(self, image: str = BASE_IMAGE, client: Any = None) -> None:
        self.client = client if client is not None else connect()
        require_image(self.client, image)
        self.image = image
        self.owner: Owner | None = NOBODY if os.geteuid() == 0 else None
        uid, gid = self.owner or (os.geteuid(), os.getegid())
        self.user = f"{uid}:{gid}"
        remove_stale_containers(self.client)

    def run(self, request: SandboxRequest) -> SandboxResult:
        check_mounts(request.mounts)
        if self.owner is not None:
            check_readable(request.mounts, self.owner)
        io = IoDir(request.stdin, self.owner)
        try:
            plan = plan_run(request, system_view(), str(io.io), str(io.empty))
            writable = [os.path.realpath(m.source) for m in request.mounts if m.writable]
            with lend(writable, self.owner):
                captured, exit_code, duration = self._run_container(plan, io, request.timeout_s)
        finally:
            io.close()
        if not captured.timed_out and not captured.status:
            raise InfraError(f"docker sandbox setup failed: {_last_line(captured.stderr)}")
        return SandboxResult(
            exit_code=None if captured.timed_out else exit_code,
            timed_out=captured.timed_out,
            duration_s=duration,
            stdout=captured.stdout,
            stderr=captured.stderr,
            channel=captured.channel,
            channel_arrivals=captured.channel_arrivals,
        )

    def _run_container(
        self, plan: RunPlan, io: IoDir, timeout_s: float
    ) -> tuple[Captured, int | None, float]:
        import docker.errors
        import docker.types

        try:
            container = self.client.containers.create(
                self.image,
                command=list(plan.command),
                user=self.user,
                mounts=[
                    docker.types.Mount(m.target, m.source, type="bind", read_only=not m.writable)
                    for m in plan.mounts
                ],
                tmpfs=plan.tmpfs,
                labels={LABEL: owner_label()},
                **plan.options,
            )
        except docker.errors.DockerException as exc:
            raise InfraError(f"docker cannot create the sandbox: {_last_line(str(exc))}") from exc
        try:
            return self._start_and_collect(container, plan, io, timeout_s)
        finally:
            _remove(container)

    def _start_and_collect(
        self, container: Any, plan: RunPlan, io: IoDir, timeout_s: float
    ) -> tuple[Captured, int | None, float]:
        import docker.errors

        with _Waiter(container, timeout_s + WAIT_MARGIN_S) as waiter:
            started = time.monotonic()
            try:
                container.start()
            except docker.errors.DockerException as exc:
                raise InfraError(
                    f"docker cannot start the sandbox: {_last_line(str(exc))}"
                ) from exc
            waiter.start()
            captured = io.collect(
                plan.output_cap, waiter.read_fd, started + timeout_s, lambda: _kill(container)
            )
            duration = time.monotonic() - started
            return captured, waiter.exit_code(), duration


def connect() -> Any:
    """A docker client that answers, or SandboxUnavailable with the setup hint."""
    try:
        import docker
    except ImportError as exc:
        raise SandboxUnavailable(
            "the docker Python package is missing; pip install docker"
        ) from exc
    try:
        client = docker.from_env(timeout=60, max_pool_size=64)
        client.ping()
    except docker.errors.DockerException as exc:
        raise SandboxUnavailable(
            f"no Docker engine answers ({_last_line(str(exc))}); {SETUP_HINT}"
        ) from exc
    return client


def require_image(client: Any, image: str) -> None:
    import docker.errors

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound as exc:
        raise SandboxUnavailable(f"docker image {image} is missing; {SETUP_HINT}") from exc
    except docker.errors.DockerException as exc:
        raise SandboxUnavailable(f"docker cannot inspect {image}: {_last_line(str(exc))}") from exc


def check_readable(mounts: Sequence[Mount], owner: Owner) -> None:
    """A read-only source the sandbox user cannot read (a 0700 temporary folder of root's, say)
    would fail obscurely inside: say so here (InfraError)."""
    for mount in mounts:
        if mount.writable:
            continue
        info = os.stat(mount.source)
        wanted = 0o5 if stat.S_ISDIR(info.st_mode) else 0o4
        if info.st_uid == owner[0]:
            granted = info.st_mode >> 6
        elif info.st_gid == owner[1]:
            granted = info.st_mode >> 3
        else:
            granted = info.st_mode
        if granted & wanted != wanted:
            raise InfraError(
                f"docker sandbox: {mount.source} (mode {stat.S_IMODE(info.st_mode):04o}) is not "
                f"readable by the sandbox user {owner[0]}; make it readable by others (o+rX)"
            )


def plan_run(request: SandboxRequest, view: SystemView, io_dir: str, empty_dir: str) -> RunPlan:
    """The container for `request`: wrapper command, mounts, tmpfs and engine options."""
    limits = request.limits
    size = (limits.file_size_mb or DEFAULT_TMPFS_MB) << 20
    mounts = (*merge_mounts(view_mounts(view, empty_dir), request.mounts), Mount(io_dir, IO_DIR))
    tmpfs = {} if any(m.target == "/tmp" for m in mounts) else {"/tmp": _tmpfs(size)}
    options: dict[str, Any] = {
        "network_mode": "host" if request.network else "none",
        "read_only": True,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "init": False,
        "hostname": "sandbox",
        "working_dir": "/",
        "environment": {},
        "shm_size": size,
        "ulimits": ulimits(limits),
        "log_config": {"type": "none", "config": {}},
        **resource_options(limits),
    }
    return RunPlan(command(request), mounts, tmpfs, options, limits.output_bytes)


def command(request: SandboxRequest) -> tuple[str, ...]:
    """`sh WRAPPER cwd env -i -- VARS sh -c PWD-FIX argv...`: see the module docstring."""
    address_space = request.limits.address_space_mb
    script = WRAPPER.format(
        channel=f"3>{IO_DIR}/channel" if request.channel else "",
        limit="" if address_space is None else f"ulimit -v {address_space << 10} || exit 1; ",
    )
    assignments = [f"{name}={value}" for name, value in request.env.items()]
    if "PWD" in request.env:
        last = (SHELL, "-c", SET_PWD, request.env["PWD"])
    else:
        last = (SHELL, "-c", DROP_PWD, "sh")
    head = (SHELL, "-c", script, "sh", request.cwd, ENV_BINARY, "-i", "--")
    return (*head, *assignments, *last, *request.argv)


def view_mounts(view: SystemView, empty_dir: str) -> tuple[Mount, ...]:
    """`view` as read-only binds: a link shows its target's content at its own path (package
    folders under a linked folder are covered there too), package folders show `empty_dir`."""
    binds = [Mount.same(path) for path in view.read_only]
    covers = [Mount(empty_dir, path) for path in view.hidden_dirs]
    covers += [Mount("/dev/null", path) for path in view.hidden_files]
    for link in view.symlinks:
        real = os.path.realpath(link.path)
        if not os.path.exists(real):
            continue
        binds.append(Mount(real, link.path))
        for cover in list(covers):
            if cover.target.startswith(real.rstrip("/") + "/"):
                covers.append(Mount(cover.source, link.path + cover.target[len(real) :]))
    return (*binds, *covers)


def merge_mounts(view: Sequence[Mount], requested: Sequence[Mount]) -> tuple[Mount, ...]:
    """One mount per target (the engine refuses duplicates); the request's win."""
    by_target = {os.path.normpath(m.target): m for m in view}
    by_target.update({os.path.normpath(m.target): m for m in requested})
    return tuple(by_target.values())


def resource_options(limits: Limits) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if limits.pids is not None:
        options["pids_limit"] = limits.pids + INIT_PROCESSES
    if limits.memory_mb is not None:
        options["mem_limit"] = options["memswap_limit"] = f"{limits.memory_mb}m"
    return options


def ulimits(limits: Limits) -> list[dict[str, Any]]:
    """No core files; the file size the request says.  (The address space is limited by the
    wrapper: runc's own start-up, which runs under these limits, needs far more.)"""
    found = [{"name": "core", "soft": 0, "hard": 0}]
    if limits.file_size_mb is not None:
        size = limits.file_size_mb << 20
        found.append({"name": "fsize", "soft": size, "hard": size})
    return found


def owner_label() -> str:
    """`pid:start-time` of this process, to find containers a crashed process left behind."""
    return f"{os.getpid()}:{_start_time(os.getpid())}"


def remove_stale_containers(client: Any) -> int:
    """Remove sandbox containers whose creating process is gone; returns how many."""
    import docker.errors

    removed = 0
    with contextlib.suppress(docker.errors.DockerException):
        # the low-level list carries each container's labels: `containers.list` inspects each
        # one after listing, and a container another process removes in between is a NotFound
        for found in client.api.containers(all=True, filters={"label": LABEL}):
            pid, _, started = (found.get("Labels") or {}).get(LABEL, "").partition(":")
            if pid.isdigit() and _start_time(int(pid)) == started:
                continue
            with contextlib.suppress(docker.errors.DockerException):
                client.api.remove_container(found["Id"], force=True)
                removed += 1
    return removed


class _Waiter:
    """`container.wait()` in a thread; `read_fd` turns readable once it returned.

    The thread owns the pipe's write end (closes it when done), so leaving the block early never
    waits for it: removing the container ends the wait.
    """

    def __init__(self, container: Any, timeout_s: float) -> None:
        self.container = container
        self.timeout_s = timeout_s
        self.read_fd, self._write_fd = os.pipe()
        self._thread = threading.Thread(target=self._wait, name="docker-wait", daemon=True)
        self._status: int | None = None
        self._error: str | None = None

    def __enter__(self) -> _Waiter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread.ident is None:  # never started
            os.close(self._write_fd)
        os.close(self.read_fd)

    def start(self) -> None:
        self._thread.start()

    def _wait(self) -> None:
        import docker.errors
        import requests.exceptions

        try:
            status = self.container.wait(timeout=self.timeout_s).get("StatusCode")
            self._status = status if isinstance(status, int) else None
        except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
            self._error = _last_line(str(exc))
        finally:
            with contextlib.suppress(OSError):
                os.write(self._write_fd, b"x")
            os.close(self._write_fd)

    def exit_code(self) -> int | None:
        """After `read_fd` turned readable."""
        self._thread.join(timeout=self.timeout_s)
        if self._error is not None:
            raise InfraError(f"docker lost the sandbox: {self._error}")
        return self._status


def _remove(container: Any) -> None:
    """Remove (and so kill) the container; one that survives is an InfraError."""
    import docker.errors

    try:
        container.remove(force=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.DockerException as exc:
        raise InfraError(f"docker cannot remove the sandbox: {_last_line(str(exc))}") from exc


def _kill(container: Any) -> None:
    import docker.errors

    with contextlib.suppress(docker.errors.DockerException):
        container.kill()


def _tmpfs(size: int) -> str:
    return f"rw,nosuid,nodev,size={size},mode=1777"


def _start_time(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _last_line(text: str | bytes) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    lines = text.strip().splitlines()
    return lines[-1][:300] if lines else "no message"
