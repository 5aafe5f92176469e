"""Pytest plugin detection from the configuration pytest would use."""

from __future__ import annotations

from pathlib import Path

from replicate.envs.plugins import PytestConfig, find_pytest_config, plugins_for


def _config(*addopts: str, keys: tuple[str, ...] = ()) -> PytestConfig:
    return PytestConfig("test", tuple(addopts), (), keys)


def test_options_map_to_distributions() -> None:
    assert plugins_for(_config("-n4")) == ["pytest-xdist"]
    assert plugins_for(_config("-nauto", "--dist=loadscope")) == ["pytest-xdist"]
    assert plugins_for(_config("--numprocesses", "2")) == ["pytest-xdist"]
    assert plugins_for(_config("--cov-report=term", "--no-cov-on-fail")) == ["pytest-cov"]
    assert plugins_for(_config("--mypy", "--flake8")) == ["pytest-mypy", "pytest-flake8"]
    assert plugins_for(_config("-pxdist", "-p", "pytest_mock", "-p", "no:randomly")) == [
        "pytest-xdist",
        "pytest-mock",
    ]
    assert plugins_for(_config("-p", "pytester", "-p", "tests.helpers", "-ra", "--strict")) == []
    assert plugins_for(_config(keys=("asyncio_mode", "filterwarnings"))) == ["pytest-asyncio"]


def test_pytest_ini_wins_over_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\naddopts = "--cov"\n')
    assert find_pytest_config(tmp_path) == PytestConfig(
        "pyproject.toml [tool.pytest]", ("--cov",), (), ("addopts",)
    )
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --timeout 5\ntimeout_method = thread\n"
    )
    config = find_pytest_config(tmp_path)
    assert config is not None
    assert config.origin == "pytest.ini [pytest]"
    assert plugins_for(config) == ["pytest-timeout"]


def test_empty_pytest_ini_still_wins(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("")
    (tmp_path / "tox.ini").write_text("[pytest]\naddopts = --cov\n")
    config = find_pytest_config(tmp_path)
    assert config is not None and config.addopts == ()


def test_no_configuration(tmp_path: Path) -> None:
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = x\n")
    assert find_pytest_config(tmp_path) is None
