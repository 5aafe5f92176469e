"""prepare_tree(), source_version_files(), static_version() and metadata_dir()."""

from __future__ import annotations

import importlib.metadata
import textwrap
from pathlib import Path

import pytest

from replicate.envs.prepare import (
    metadata_dir,
    prepare_tree,
    source_version_files,
    static_version,
    version_tuple,
)


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def test_setuptools_scm_version_file_is_created(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "scmpkg"
        dynamic = ["version"]
        [tool.setuptools_scm]
        write_to = "src/scmpkg/_version.py"
        """,
    )
    (tmp_path / "src" / "scmpkg").mkdir(parents=True)
    assert source_version_files(tmp_path) == ("src/scmpkg/_version.py",)
    notes = prepare_tree(tmp_path, "scmpkg")
    assert notes == ("created src/scmpkg/_version.py (scmpkg version 0.0.0)",)
    text = (tmp_path / "src" / "scmpkg" / "_version.py").read_text()
    assert '__version__ = version = "0.0.0"' in text
    assert "__version_tuple__ = version_tuple = (0, 0, 0)" in text
    namespace: dict[str, object] = {}
    exec(compile(text, "_version.py", "exec"), namespace)
    assert namespace["version_tuple"] == (0, 0, 0)
    # a second run leaves the file alone
    (tmp_path / "src" / "scmpkg" / "_version.py").write_text("kept\n")
    assert prepare_tree(tmp_path, "scmpkg") == ()
    assert (tmp_path / "src" / "scmpkg" / "_version.py").read_text() == "kept\n"


def test_hatch_pdm_templates_and_setup_py(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        """
        [tool.hatch.build.hooks.vcs]
        version-file = "pkg/_hatch_version.py"
        [tool.pdm.version]
        source = "scm"
        write_to = "pkg/VERSION"
        [tool.setuptools_scm]
        version_file = "pkg/_tpl.py"
        version_file_template = "V = '{version}'\\n"
        """,
    )
    _write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        setup(use_scm_version={"write_to": "pkg/_legacy.py"})
        """,
    )
    assert set(source_version_files(tmp_path)) == {
        "pkg/_hatch_version.py",
        "pkg/VERSION",
        "pkg/_tpl.py",
        "pkg/_legacy.py",
    }
    prepare_tree(tmp_path, None, version="1.2.3")
    assert (tmp_path / "pkg" / "VERSION").read_text() == "1.2.3\n"
    assert (tmp_path / "pkg" / "_tpl.py").read_text() == "V = '1.2.3'\n"
    assert "version_tuple = (1, 2, 3)" in (tmp_path / "pkg" / "_hatch_version.py").read_text()
    assert (tmp_path / "pkg" / "_legacy.py").is_file()


def test_version_file_outside_the_tree_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _write(root, "pyproject.toml", '[tool.setuptools_scm]\nwrite_to = "../evil.py"\n')
    assert prepare_tree(root, None) == ("ignored version file outside the repository: ../evil.py",)
    assert not (tmp_path / "evil.py").exists()


def test_version_tuple() -> None:
    assert version_tuple("1.2.3.dev4+g123") == (1, 2, 3, "dev4", "g123")


def test_static_version(tmp_path: Path) -> None:
    assert static_version(tmp_path) is None
    _write(tmp_path, "setup.py", "from setuptools import setup\nsetup(name='x', version='4.5')\n")
    assert static_version(tmp_path) == "4.5"
    _write(tmp_path, "pyproject.toml", '[project]\nname = "x"\nversion = "1.0"\n')
    assert static_version(tmp_path) == "1.0"


def test_metadata_dir_makes_importlib_metadata_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "repo"
    _write(
        root,
        "pyproject.toml",
        """
        [project]
        name = "Replicate-Probe.Pkg"
        [project.scripts]
        probe = "probe.cli:main"
        [project.entry-points."probe.plugins"]
        one = "probe.plugins:one"
        """,
    )
    dest = tmp_path / "meta"
    folder = metadata_dir(root, None, "2.5.0", dest)
    assert folder == dest / "replicate_probe_pkg-2.5.0.dist-info"
    monkeypatch.syspath_prepend(str(dest))
    assert importlib.metadata.version("replicate-probe-pkg") == "2.5.0"
    assert importlib.metadata.version("Replicate_Probe.Pkg") == "2.5.0"
    points = importlib.metadata.entry_points(group="probe.plugins")
    assert [(p.name, p.value) for p in points] == [("one", "probe.plugins:one")]
    assert metadata_dir(tmp_path / "nameless", None, "1", dest) is None
