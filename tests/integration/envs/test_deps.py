"""discover_requirements(): every declared source, self-reference removal, markers, plugins."""

from __future__ import annotations

import textwrap
from pathlib import Path

from replicate.envs.deps import discover_requirements


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def test_pyproject_groups_self_references_and_markers(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "My_Pkg"
        dependencies = [
            "attrs>=22",
            "tomli; python_version < '3.11'",
            "setuptools",
        ]
        [project.optional-dependencies]
        test = ["hypothesis", "my-pkg[speedups]", "pip"]
        speedups = ["ujson"]
        docs = ["sphinx"]
        [dependency-groups]
        lint = ["ruff"]
        typing = ["mypy"]
        dev = [{include-group = "typing"}, "coverage"]
        [tool.pytest.ini_options]
        addopts = "-ra --cov=my_pkg -n auto -p pytest_randomly --benchmark-skip"
        required_plugins = ["pytest-timeout>=2"]
        """,
    )
    reqs = discover_requirements(tmp_path, None)
    assert reqs.dist_names == ("my-pkg",)
    assert reqs.runtime == ("attrs>=22", "setuptools")
    # "test" extra -> hypothesis + self-reference my-pkg[speedups] -> ujson; "dev" group
    # -> include-group typing -> mypy, dropped as a development tool; lint is not a test group
    assert reqs.test == ("coverage", "hypothesis", "pytest", "ujson")
    assert any("mypy" in note and "development tool" in note for note in reqs.notes)
    assert reqs.pytest_plugins == (
        "pytest-benchmark",
        "pytest-cov",
        "pytest-randomly",
        "pytest-timeout>=2",
        "pytest-xdist",
    )
    notes = "\n".join(reqs.notes)
    assert "ignored optional groups: docs\n" in notes
    assert "kept setuptools" in notes
    assert "dropped pip from test requirements" in notes
    assert "environment marker is false" in notes


def test_setup_cfg_setup_py_and_requirement_files(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "setup.cfg",
        """
        [metadata]
        name = cfgpkg
        [options]
        install_requires =
            six>=1.0  # comment
            cfgpkg[extra]
        [options.extras_require]
        testing = pytest-mock
        extra = idna
        [tool:pytest]
        addopts = --timeout=30 --doctest-plus
        """,
    )
    _write(
        tmp_path,
        "setup.py",
        """
        from setuptools import setup
        DEPS = ["click>=7"]
        setup(
            name="pypkg",
            install_requires=DEPS + ["colorama"],
            tests_require=["nose2"],
            extras_require={"test:python_version>'3'": ["freezegun"]},
        )
        """,
    )
    _write(tmp_path, "requirements.txt", "requests==2.0 --hash=sha256:abc\n-e .\n")
    _write(
        tmp_path,
        "requirements-dev.txt",
        """
        -r requirements/base.txt
        -c constraints.txt
        --index-url https://example.invalid/simple
        git+https://example.invalid/x.git#egg=x
        ./vendored/pkg
        pypkg
        toolz \\
            >=0.12
        """,
    )
    _write(tmp_path, "requirements/base.txt", "markdown\n-r ../../outside.txt\n")
    _write(tmp_path, "requirements/docs.txt", "sphinx\n")
    reqs = discover_requirements(tmp_path, "ExtraName")
    assert set(reqs.dist_names) == {"cfgpkg", "pypkg", "extraname"}
    # cfgpkg[extra] is a self-reference: replaced by the extra's idna; requirements/base.txt
    # reads as runtime by its name; `-e .`, `pypkg` (self) and the URL/path lines are dropped
    assert reqs.runtime == ("click>=7", "colorama", "idna", "markdown", "requests==2.0", "six>=1.0")
    assert reqs.test == ("freezegun", "nose2", "pytest", "pytest-mock", "toolz>=0.12")
    assert reqs.pytest_plugins == ("pytest-doctestplus", "pytest-timeout")
    notes = "\n".join(reqs.notes)
    assert "ignored requirements/docs.txt" in notes
    assert "dropped URL requirement" in notes
    assert "dropped local path requirement './vendored/pkg'" in notes
    assert "ignored requirement file outside the repository" in notes


def test_tox_nox_and_poetry(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        """
        [tool.poetry]
        name = "poet"
        [tool.poetry.dependencies]
        python = "^3.8"
        numpy = "^1.21.2"
        tiny = "~0.3"
        pinned = "2.0.1"
        any = "*"
        fancy = {version = "^0.0.4", extras = ["x"]}
        optional-thing = {version = "1", optional = true}
        fromgit = {git = "https://example.invalid/g.git"}
        [tool.poetry.group.test.dependencies]
        pytest-asyncio = ">=0.20,<1"
        [tool.poetry.dev-dependencies]
        black = "^23"
        """,
    )
    _write(
        tmp_path,
        "tox.ini",
        """
        [tox]
        envlist = py311
        [testenv]
        extras = fast
        deps =
            mock
            -r{toxinidir}/test-requirements.txt
            py38: oldthing
            {[base]deps}
        [pytest]
        addopts = -p xdist -p no:cacheprovider --reruns 2
        """,
    )
    _write(tmp_path, "test-requirements.txt", "responses\n")
    _write(
        tmp_path,
        "noxfile.py",
        """
        import nox
        @nox.session
        def tests(session):
            session.install("-e", ".[nox]", "trustme", "--upgrade")
            session.install("-r", "test-requirements.txt")
            session.run("pytest")
        """,
    )
    reqs = discover_requirements(tmp_path, None)
    assert reqs.dist_names == ("poet",)
    assert reqs.runtime == (
        "any",
        "fancy[x]<0.0.5,>=0.0.4",
        "numpy<2.0.0,>=1.21.2",
        "pinned==2.0.1",
        "tiny<0.4,>=0.3",
    )
    assert reqs.test == (  # black is a development tool: not needed to run the tests
        "mock",
        "pytest",
        "pytest-asyncio<1,>=0.20",
        "responses",
        "trustme",
    )
    assert reqs.pytest_plugins == ("pytest-rerunfailures", "pytest-xdist")
    notes = "\n".join(reqs.notes)
    assert "ignored factor-conditional tox dependency 'py38: oldthing'" in notes
    assert "ignored tox dependency with a substitution" in notes
    assert "dropped git poetry dependency fromgit" in notes
    assert "ignored optional poetry dependency optional-thing" in notes


def test_repository_that_is_pytest_plugin_does_not_list_itself(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "pytest-cov"
        dependencies = ["coverage"]
        [tool.pytest.ini_options]
        addopts = "--cov"
        """,
    )
    reqs = discover_requirements(tmp_path, None)
    assert reqs.pytest_plugins == ()
    assert reqs.test == ("pytest",)
    assert reqs.runtime == ("coverage",)


def test_empty_folder_still_needs_pytest(tmp_path: Path) -> None:
    reqs = discover_requirements(tmp_path, None)
    assert reqs.runtime == ()
    assert reqs.test == ("pytest",)
    assert reqs.pytest_plugins == ()
    assert reqs.dist_names == ()


def test_native_tox_toml(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "tox.toml",
        """
        [env_run_base]
        extras = ["testing"]
        deps = ["covdefaults", "-r{tox_root}/reqs/test.txt", "{[x]y}"]
        """,
    )
    _write(tmp_path, "reqs/test.txt", "freezegun\n")
    _write(
        tmp_path,
        "pyproject.toml",
        """
        [project]
        name = "t"
        [project.optional-dependencies]
        testing = ["hypothesis"]
        """,
    )
    reqs = discover_requirements(tmp_path, None)
    assert reqs.test == ("covdefaults", "freezegun", "hypothesis", "pytest")


def test_development_tools_are_not_test_requirements(tmp_path: Path) -> None:
    # more-itertools' requirements/development.txt: twine -> keyring -> jaraco.* would install
    # more-itertools itself into the environment; none of these tools is needed to run tests.
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "development.txt").write_text(
        "black\ncoverage\nflake8\nflit\nmypy\nsetuptools\nsphinx\nsphinx_rtd_theme\ntwine\nwheel\n",
        encoding="utf-8",
    )
    reqs = discover_requirements(tmp_path, None)
    assert reqs.test == ("coverage", "pytest")


def test_files_that_pin_one_distribution_differently_keep_its_highest_pin(tmp_path: Path) -> None:
    # wcwidth 0.2.13 keeps a pinned file per Python version; read together they never resolved
    # (pip's search for what to leave out ran for over six minutes on every gen)
    _write(tmp_path, "requirements-tests36.txt", "attrs==22.2.0\ncoverage[toml]==5.5\nsix\n")
    _write(tmp_path, "requirements-tests39.txt", "attrs==23.1.0\ncoverage==7.3.2\npytest==7.4.2\n")
    _write(tmp_path, "requirements-develop.txt", "coverage[toml]==7.3.2\nautopep8==2.0.4\n")
    reqs = discover_requirements(tmp_path, None)
    assert reqs.test == (
        "attrs==23.1.0",
        "coverage==7.3.2",
        "coverage[toml]==7.3.2",
        "pytest==7.4.2",
        "six",
    )
    dropped = [n for n in reqs.notes if "another file pins it" in n]
    assert len(dropped) == 2 and any("'attrs==22.2.0'" in n for n in dropped)
    assert any("autopep8" in n and "development tool" in n for n in reqs.notes)
