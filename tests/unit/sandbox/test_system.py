from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from replicate.sandbox.system import (
    Symlink,
    SystemView,
    build_system_view,
    find_hidden,
    system_view,
)


def touch(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def fake(tmp_path: Path) -> tuple[SystemView, Path]:
    """A small machine: merged /usr, a Debian Python, vendored packages, a pyenv-like prefix."""
    root = tmp_path / "root"
    usr = root / "usr"
    touch(usr / "bin" / "sh")
    touch(usr / "lib" / "x86_64-linux-gnu" / "libc.so.6")
    touch(usr / "lib" / "x86_64-linux-gnu" / "gdbhelper" / "__init__.py")
    touch(usr / "lib" / "x86_64-linux-gnu" / "stray-1.0.dist-info" / "METADATA")
    touch(usr / "lib" / "python3" / "dist-packages" / "six.py")
    touch(usr / "lib" / "python3.11" / "os.py")
    touch(usr / "lib" / "cloud-sdk" / "lib" / "third_party" / "attr" / "__init__.py")
    touch(usr / "lib" / "cloud-sdk" / "lib" / "third_party" / "attr" / "sub" / "__init__.py")
    touch(usr / "lib" / "cloud-sdk" / "bin" / "tool")
    touch(usr / "share" / "doc" / "attrs" / "README")
    touch(usr / "share" / "python-wheels" / "pip-23.0-py3-none-any.whl")
    touch(usr / "share" / "zoneinfo" / "UTC")
    touch(usr / "local" / "lib" / "python3.11" / "dist-packages" / "x.py")
    touch(usr / "include" / "Python.h")
    touch(root / "etc" / "passwd")
    touch(root / "etc" / "shadow")
    (root / "etc" / "localtime").symlink_to("/usr/share/zoneinfo/UTC")
    for name in ("bin", "lib"):
        (root / name).symlink_to(f"usr/{name}")
    prefix = tmp_path / "prefix"
    touch(prefix / "bin" / "python3.11")
    (prefix / "bin" / "python3").symlink_to("python3.11")
    touch(prefix / "bin" / "pip")
    touch(prefix / "bin" / "python3.11-config")
    touch(prefix / "lib" / "libpython3.11.so.1.0")
    touch(prefix / "lib" / "libssl.so")
    stdlib = prefix / "lib" / "python3.11"
    touch(stdlib / "os.py")
    touch(stdlib / "json" / "__init__.py")
    touch(stdlib / "site-packages" / "attr" / "__init__.py")
    touch(stdlib / "ensurepip" / "__init__.py")
    touch(stdlib / "ensurepip" / "_bundled" / "pip-23.whl")
    return build_system_view(str(prefix), (3, 11), root=str(root)), tmp_path


def test_whitelist_of_what_is_shown(fake: tuple[SystemView, Path]) -> None:
    view, base = fake
    root, prefix = base / "root", base / "prefix"
    shown = {os.path.relpath(p, base) for p in view.read_only}
    assert shown == {
        "root/usr/bin",
        "root/usr/lib",
        "root/usr/share",
        "root/etc/passwd",
        "prefix/bin/python3.11",
        "prefix/lib/libpython3.11.so.1.0",
        "prefix/lib/python3.11",
    }
    assert set(view.symlinks) == {
        Symlink(str(root / "bin"), "usr/bin"),
        Symlink(str(root / "lib"), "usr/lib"),
        Symlink(str(root / "etc" / "localtime"), "/usr/share/zoneinfo/UTC"),
        Symlink(str(prefix / "bin" / "python3"), "python3.11"),
    }
    assert view.python == str(prefix / "bin" / "python3.11")
    assert view.stdlib == str(prefix / "lib" / "python3.11")
    assert view.scratch == ("/tmp",)


def test_read_only_lists_parents_first(fake: tuple[SystemView, Path]) -> None:
    depths = [p.count("/") for p in fake[0].read_only]
    assert depths == sorted(depths)


def test_every_package_folder_is_hidden(fake: tuple[SystemView, Path]) -> None:
    view, base = fake
    hidden = {os.path.relpath(p, base) for p in view.hidden_dirs}
    assert hidden == {
        "prefix/lib/python3.11/site-packages",
        "prefix/lib/python3.11/ensurepip/_bundled",
        "root/usr/lib/python3",  # Debian's, whole (its dist-packages inside is not listed again)
        "root/usr/lib/python3.11",
        "root/usr/lib/cloud-sdk/lib/third_party",  # the import root of a vendored package
        "root/usr/lib/x86_64-linux-gnu/gdbhelper",  # never the shared-library folder itself
        "root/usr/lib/x86_64-linux-gnu/stray-1.0.dist-info",
        "root/usr/share/doc",
        "root/usr/share/python-wheels",
    }
    assert view.hidden_files == ()


def test_the_interpreters_own_stdlib_is_never_hidden(tmp_path: Path) -> None:
    # a Debian interpreter: its stdlib lives in /usr/lib/python3.11
    stdlib = tmp_path / "usr" / "lib" / "python3.11"
    touch(stdlib / "json" / "__init__.py")
    touch(stdlib / "site-packages" / "x.py")
    touch(tmp_path / "usr" / "lib" / "python3" / "dist-packages" / "six.py")
    hidden = find_hidden(
        [str(tmp_path / "usr" / "lib")],
        stdlib=str(stdlib),
        explicit=[str(stdlib), str(tmp_path / "usr" / "lib" / "python3")],
    )
    assert hidden == (str(tmp_path / "usr/lib/python3"), str(stdlib / "site-packages"))


def test_nested_results_collapse_by_path_components(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    for name in ("a/c", "a-b", "a/site-packages/x/site-packages"):
        (lib / name).mkdir(parents=True)
    explicit = [str(lib / "a"), str(lib / "a-b"), str(lib / "a" / "c")]  # "a-b" sorts between
    hidden = find_hidden([str(lib)], stdlib=str(tmp_path / "none"), explicit=explicit)
    assert hidden == (str(lib / "a"), str(lib / "a-b"))


def test_this_machine() -> None:
    view = system_view()
    assert system_view() is view  # computed once
    assert view.stdlib in view.read_only
    assert os.path.join(view.stdlib, "site-packages") in view.hidden_dirs
    assert view.python == os.path.join(sys.base_prefix, "bin", "python3.11")
    assert "/usr/bin" in view.read_only and "/usr/local" not in view.read_only
    for path in ("/usr/lib/python3/dist-packages", "/usr/share/python-wheels"):
        if os.path.isdir(path):
            assert any(path == h or path.startswith(h + "/") for h in view.hidden_dirs), path
    assert not any(view.stdlib.startswith(h) for h in view.hidden_dirs)
