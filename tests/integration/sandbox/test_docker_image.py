"""The base-image recipe: apt's mirror, the trim, the fallback order, and (with an engine) the
export / import round trip on a tiny image."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import replicate.sandbox.docker_image as recipe
from replicate.sandbox.docker_image import (
    SOURCE_LABEL,
    AptSource,
    apt_sources,
    debian_mirror,
    ensure_base_image,
    host_suite,
    import_rootfs,
    pull_source,
    rootfs_from_image,
    trim_rootfs,
)

DEB822 = """\
Types: deb
# http://snapshot.debian.org/archive/debian/20250520T000000Z
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main

Types: deb-src
URIs: http://src.example/debian
Suites: bookworm
Components: main
"""


def apt_dir(tmp_path: Path, one_line: str, deb822: str) -> Path:
    (tmp_path / "sources.list.d").mkdir(parents=True)
    (tmp_path / "sources.list").write_text(one_line)
    (tmp_path / "sources.list.d" / "debian.sources").write_text(deb822)
    (tmp_path / "sources.list.d" / "gcloud.list").write_text(
        "deb [signed-by=/k.gpg] https://packages.example/apt cloud-sdk-bookworm main\n"
    )
    return tmp_path


def test_the_mirror_is_the_one_serving_the_suite_itself(tmp_path: Path) -> None:
    sources = apt_sources(apt_dir(tmp_path, "# nothing here\n", DEB822))
    assert AptSource(
        "http://deb.debian.org/debian-security", ("bookworm-security",), ("main",)
    ) in (sources)
    assert all("src.example" not in s.uri for s in sources)  # deb-src is not a binary source
    assert debian_mirror(sources, "bookworm") == "http://deb.debian.org/debian"
    assert debian_mirror(sources, "trixie") is None


def test_one_line_sources_count_too(tmp_path: Path) -> None:
    one_line = "deb [arch=amd64] http://mirror.example/debian bookworm main contrib # comment\n"
    sources = apt_sources(apt_dir(tmp_path, one_line, ""))
    assert debian_mirror(sources, "bookworm") == "http://mirror.example/debian"


def test_host_suite(tmp_path: Path) -> None:
    release = tmp_path / "os-release"
    release.write_text('NAME="Debian GNU/Linux"\nVERSION_CODENAME=trixie\n')
    assert host_suite(release) == "trixie"
    assert host_suite(tmp_path / "missing") == "bookworm"


def test_pull_source_follows_the_interpreter() -> None:
    assert pull_source((3, 12)) == "python:3.12-slim"
    assert pull_source().startswith("python:3.")


def test_trim_drops_usr_local_and_root(tmp_path: Path) -> None:
    for folder in ("usr/local/lib/python3.11/site-packages/pip", "root/.cache", "usr/bin", "etc"):
        (tmp_path / folder).mkdir(parents=True)
    trim_rootfs(tmp_path)
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")) == [
        "etc",
        "usr",
        "usr/bin",
    ]


class Images:
    def __init__(self, present: bool, pull_error: Exception | None = None) -> None:
        self.present = present
        self.pull_error = pull_error
        self.pulled: list[str] = []

    def get(self, name: str) -> object:
        import docker.errors

        if not self.present:
            raise docker.errors.ImageNotFound(name)
        return object()

    def pull(self, name: str) -> None:
        self.pulled.append(name)
        if self.pull_error is not None:
            raise self.pull_error


class Client:
    def __init__(self, images: Images) -> None:
        self.images = images


def test_a_present_image_is_kept() -> None:
    client = Client(Images(present=True))
    assert ensure_base_image(client, "img:1", say=lambda line: None) == "present"
    assert client.images.pulled == []


def test_no_registry_falls_back_to_debootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    import docker.errors

    images = Images(present=False, pull_error=docker.errors.APIError("no such host"))
    calls: list[str] = []

    def fake_debootstrap(root: Path, say: Any) -> str:
        (root / "usr" / "local").mkdir(parents=True)
        calls.append("debootstrap")
        return "debootstrap:bookworm"

    def fake_import(client: Any, root: Path, image: str, source: str) -> None:
        assert not (root / "usr" / "local").exists()  # trimmed first
        calls.append(f"import {image} {source}")

    monkeypatch.setattr(recipe, "_debootstrap_rootfs", fake_debootstrap)
    monkeypatch.setattr(recipe, "import_rootfs", fake_import)
    said: list[str] = []
    assert ensure_base_image(Client(images), "img:1", say=said.append) == "debootstrap:bookworm"
    assert calls == ["debootstrap", "import img:1 debootstrap:bookworm"]
    assert images.pulled == [pull_source()]
    assert said[1].startswith(f"cannot pull {pull_source()} (") and said[1].endswith("offline")


@pytest.fixture
def engine() -> Iterator[Any]:
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        pytest.skip(f"no Docker engine: {exc}")
    yield client
    client.close()


def test_import_and_export_round_trip(engine: Any, tmp_path: Path) -> None:
    root = tmp_path / "rootfs"
    (root / "etc").mkdir(parents=True)
    (root / "etc" / "marker").write_text("tiny\n")
    image = f"replicate-test-{uuid.uuid4().hex[:8]}:1"
    import_rootfs(engine, root, image, "test")
    try:
        assert engine.images.get(image).labels == {SOURCE_LABEL: "test"}
        unpacked = tmp_path / "unpacked"
        unpacked.mkdir()
        rootfs_from_image(engine, image, unpacked)
        assert (unpacked / "etc" / "marker").read_text() == "tiny\n"
    finally:
        engine.images.remove(image, force=True)
