"""The base image of the docker sandbox: a minimal Debian root file system, built once per machine.

The sandbox shows the container the host's base-system view (see `system.py`) over this image, so
the image supplies the root skeleton, `/etc` and a Debian userland for tools that look beyond the
view; it holds no Python packages.  Two recipes, tried in order:

1. pull `python:3.X-slim` (X = this interpreter's minor version) where a registry answers;
2. offline: `debootstrap --variant=minbase` from the Debian mirror apt already uses.

Either root file system is trimmed (`/usr/local`, which holds the slim image's pip and setuptools,
and `/root`, which would hide mounts below it from an unprivileged user) and imported as
`BASE_IMAGE`.  Nothing here runs at import time; `python -m replicate.sandbox.docker_image`
(or scripts/docker-setup.sh) builds the image when it is missing.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BASE_IMAGE = "replicate-base:1"  # bump the tag when the recipe changes
SOURCE_LABEL = "org.replicate.base.source"
DEBOOTSTRAP_PACKAGES = ("python3", "git", "ca-certificates", "libfaketime")
TRIMMED = ("usr/local", "root")
DEFAULT_SUITE = "bookworm"
DEBOOTSTRAP_TIMEOUT_S = 1800
_SUITE_LINE = re.compile(r"^VERSION_CODENAME=\"?([a-z]+)\"?$", re.MULTILINE)

Say = Callable[[str], None]


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]
    components: tuple[str, ...]


def host_suite(os_release: Path = Path("/etc/os-release")) -> str:
    """The Debian codename of this machine (bookworm when it cannot be read)."""
    try:
        found = _SUITE_LINE.search(os_release.read_text())
    except OSError:
        return DEFAULT_SUITE
    return found.group(1) if found else DEFAULT_SUITE


def apt_sources(apt_dir: Path = Path("/etc/apt")) -> list[AptSource]:
    """Binary package sources apt is configured with (deb822 `.sources` and one-line `.list`)."""
    found: list[AptSource] = []
    lists = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in lists:
        found += _one_line_sources(_read(path))
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        found += _deb822_sources(_read(path))
    return found


def debian_mirror(sources: Iterable[AptSource], suite: str) -> str | None:
    """The first source serving `suite` itself (not `-updates`/`-security`) with `main`."""
    for source in sources:
        if suite in source.suites and "main" in source.components:
            return source.uri
    return None


def pull_source(version: Sequence[int] | None = None) -> str:
    version = version or tuple(sys.version_info[:2])
    return f"python:{version[0]}.{version[1]}-slim"


def trim_rootfs(root: Path) -> None:
    """Drop what the sandbox must not show or must create itself (see the module docstring)."""
    for relative in TRIMMED:
        path = root / relative
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.is_dir():
            shutil.rmtree(path)


def image_exists(client: Any, image: str = BASE_IMAGE) -> bool:
    import docker.errors

    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    return True


def ensure_base_image(client: Any, image: str = BASE_IMAGE, say: Say = print) -> str:
    """Build `image` unless present; returns where it came from (`present`, a pull, debootstrap)."""
    if image_exists(client, image):
        return "present"
    with tempfile.TemporaryDirectory(prefix="replicate-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        root.mkdir()
        source = _pulled_rootfs(client, root, say) or _debootstrap_rootfs(root, say)
        trim_rootfs(root)
        say(f"importing the root file system as {image}")
        import_rootfs(client, root, image, source)
    return source


def rootfs_from_image(client: Any, source: str, dest: Path) -> None:
    """Unpack the file system of image `source` into `dest` (through a container never started)."""
    container = client.containers.create(source, command=["/bin/true"])
    try:
        tar = subprocess.Popen(["tar", "-x", "-C", str(dest)], stdin=subprocess.PIPE)
        assert tar.stdin is not None
        with tar.stdin:
            for chunk in container.export():
                tar.stdin.write(chunk)
        if tar.wait() != 0:
            raise RuntimeError(f"cannot unpack the file system of {source}")
    finally:
        container.remove(force=True)


def import_rootfs(client: Any, root: Path, image: str, source: str) -> None:
    """`tar -C root -c . | docker import` with a label naming the recipe."""
    repository, _, tag = image.rpartition(":")
    tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
    assert tar.stdout is not None
    with tar.stdout:
        client.api.import_image_from_stream(
            tar.stdout, repository=repository, tag=tag, changes=[f"LABEL {SOURCE_LABEL}={source}"]
        )
    if tar.wait() != 0 or not image_exists(client, image):
        raise RuntimeError(f"importing {root} as {image} failed")


def _pulled_rootfs(client: Any, root: Path, say: Say) -> str | None:
    import docker.errors

    source = pull_source()
    say(f"pulling {source}")
    try:
        client.images.pull(source)
    except docker.errors.DockerException as exc:
        say(f"cannot pull {source} ({_first_line(str(exc))}); building offline")
        return None
    rootfs_from_image(client, source, root)
    return source


def _debootstrap_rootfs(root: Path, say: Say) -> str:
    suite = host_suite()
    mirror = debian_mirror(apt_sources(), suite)
    if mirror is None:
        raise RuntimeError(f"no Debian mirror for {suite} in /etc/apt; cannot build offline")
    binary = shutil.which("debootstrap")
    if binary is None:
        raise RuntimeError("debootstrap not found; apt-get install debootstrap")
    say(f"debootstrap {suite} from {mirror} (about a minute)")
    argv = [binary, "--variant=minbase", f"--include={','.join(DEBOOTSTRAP_PACKAGES)}"]
    done = subprocess.run(
        [*argv, suite, str(root), mirror],
        capture_output=True,
        text=True,
        timeout=DEBOOTSTRAP_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        raise RuntimeError(f"debootstrap failed: {tail[0] if tail else done.returncode}")
    shutil.rmtree(root / "var" / "cache" / "apt" / "archives", ignore_errors=True)
    return f"debootstrap:{suite}"


def _one_line_sources(text: str) -> list[AptSource]:
    found = []
    for line in text.splitlines():
        words = re.sub(r"\[[^\]]*\]", " ", line.split("#", 1)[0]).split()
        if len(words) >= 3 and words[0] == "deb":
            found.append(AptSource(words[1], (words[2],), tuple(words[3:])))
    return found


def _deb822_sources(text: str) -> list[AptSource]:
    found = []
    for stanza in re.split(r"\n\s*\n", text):
        fields: dict[str, str] = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line or line[:1].isspace():
                continue
            key, _, value = line.partition(":")
            fields[key.strip().lower()] = value.strip()
        if "deb" not in fields.get("types", "").split() or fields.get("enabled") == "no":
            continue
        suites = tuple(fields.get("suites", "").split())
        components = tuple(fields.get("components", "").split())
        found += [AptSource(uri, suites, components) for uri in fields.get("uris", "").split()]
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else "no message"


def main(argv: Sequence[str] | None = None) -> int:
    """Build the base image when missing (`--check`: only say whether it is there)."""
    parser = argparse.ArgumentParser(prog="python -m replicate.sandbox.docker_image")
    parser.add_argument("--image", default=BASE_IMAGE)
    parser.add_argument("--check", action="store_true", help="exit 1 when the image is missing")
    args = parser.parse_args(argv)
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        print(f"no Docker engine answers: {_first_line(str(exc))}", file=sys.stderr)
        return 2
    if args.check:
        present = image_exists(client, args.image)
        print(f"{args.image}: {'present' if present else 'missing'}")
        return 0 if present else 1
    try:
        source = ensure_base_image(client, args.image)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        print(f"cannot build {args.image}: {exc}", file=sys.stderr)
        return 1
    print(f"{args.image}: {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
