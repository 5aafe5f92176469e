"""A local repository's name: its metadata's project name, its remote's owner/name, its folder;
and its identity, which tells two repositories of one name apart."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from replicate.acquire import acquire
from replicate.acquire.naming import clean_name, project_name, remote_name, suffix

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_names_are_sanitised_to_the_id_alphabet() -> None:
    assert clean_name("samplelib") == "samplelib"
    assert clean_name("My Project") == "My-Project"
    assert clean_name("../../etc") == "etc"  # no way out of the batch's folders
    assert clean_name("owner/name") == "owner/name"
    assert clean_name("???") is None
    assert clean_name("") is None
    assert clean_name("x" * 300) == "x" * 100


def test_the_project_name_comes_from_the_metadata_in_order() -> None:
    pyproject = '[project]\nname = "from-pyproject"\n'
    setup_cfg = "[metadata]\nname = from-cfg\n"
    setup_py = 'import setuptools\nsetuptools.setup(version="1", name="from-setup-py")\n'
    assert project_name({"pyproject.toml": pyproject, "setup.cfg": setup_cfg}) == "from-pyproject"
    no_project = "[build-system]\nrequires = []\n"
    assert project_name({"pyproject.toml": no_project, "setup.cfg": setup_cfg}) == "from-cfg"
    assert project_name({"setup.py": setup_py}) == "from-setup-py"
    assert project_name({"pyproject.toml": "not [toml", "setup.py": "def ("}) is None


def test_setup_py_is_read_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f'open({str(marker)!r}, "w")\nfrom setuptools import setup\nsetup(name="quiet")\n'
    assert project_name({"setup.py": code}) == "quiet"
    assert not marker.exists()
    assert project_name({"setup.py": "from setuptools import setup\nsetup(name=NAME)\n"}) is None


def test_a_remote_gives_owner_and_name() -> None:
    assert remote_name("git@github.com:Owner/Name.git") == "Owner/Name"
    assert remote_name("https://gitlab.com/group/sub/proj") == "sub/proj"


def test_suffix_of_a_root_commit_is_its_prefix() -> None:
    assert suffix("root:" + "ab" * 20) == "abababab"
    assert suffix("url:github.com/a/x") != suffix("url:github.com/b/x")


def test_the_bundled_library_keeps_its_name(cache: Path) -> None:
    """corpus/samplelib's project name is its folder's: its task ids stay `samplelib__...`."""
    repo = acquire(str(REPO_ROOT / "corpus" / "samplelib"), None, cache)
    assert repo.key == "samplelib"


def test_local_repositories_named_by_metadata_then_remote_then_folder(
    tmp_path: Path, cache: Path, gitcmd: Callable[..., str]
) -> None:
    def repo_at(path: Path, files: dict[str, str]) -> Path:
        path.mkdir(parents=True)
        for name, text in files.items():
            (path / name).write_text(text)
        gitcmd(path, "init", "-q", "-b", "main")
        gitcmd(path, "add", ".")
        gitcmd(path, "commit", "-q", "-m", "one")
        return path

    named = repo_at(tmp_path / "a" / "src", {"pyproject.toml": '[project]\nname = "alpha"\n'})
    bare = repo_at(tmp_path / "b" / "src", {"mod.py": "X = 1\n"})
    gitcmd(bare, "remote", "add", "origin", "https://github.com/someone/beta.git")
    plain = repo_at(tmp_path / "c" / "src", {"mod.py": "X = 2\n"})
    one, two, three = (acquire(str(p), None, cache) for p in (named, bare, plain))
    assert (one.key, two.key, three.key) == ("alpha", "someone/beta", "src")
    assert two.origin == "url:github.com/someone/beta"
    root = gitcmd(plain, "rev-list", "--max-parents=0", "HEAD")
    assert three.origin == f"root:{root}"
