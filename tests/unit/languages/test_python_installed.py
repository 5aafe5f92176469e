"""A root-level module the setuptools configuration does not install is a script, not the
library (simplejson 4.3.0's `tsan_stress_simplejson.py`, beside `packages=['simplejson', ...]`):
skipped with its reason. The control: where nothing says what is installed, it is extracted."""

from __future__ import annotations

from pathlib import Path

import pytest

from replicate.languages.python import NOT_INSTALLED, discover_python
from replicate.languages.python_installed import installed_root_modules

LIBRARY = "def double(x):\n    return 2 * x\n"
SCRIPT = "#!/usr/bin/env python3\nimport sys\n\ndef hammer(n):\n    return n\n\nsys.exit(0)\n"


def _tree(tmp_path: Path, **config: str) -> Path:
    (tmp_path / "pkg").mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text(LIBRARY)
    (tmp_path / "stress.py").write_text(SCRIPT)
    (tmp_path / "single.py").write_text(LIBRARY)
    for name, text in config.items():
        (tmp_path / name.replace("_", ".")).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("config", "installed"),
    [
        ({"setup_py": "from setuptools import setup\nsetup(packages=['pkg'])\n"}, frozenset()),
        (
            {"setup_py": "import setuptools\nsetuptools.setup(py_modules=['single'])\n"},
            frozenset({"single"}),
        ),
        ({"setup_py": "from setuptools import setup\nsetup(**KW)\n"}, None),
        ({"setup_py": "setup(py_modules=[NAME], packages=[])\n"}, None),  # not read unrun
        ({"setup_cfg": "[options]\npackages = find:\npy_modules =\n  single\n"}, {"single"}),
        ({"pyproject_toml": "[tool.setuptools]\npackages = ['pkg']\n"}, frozenset()),
        ({"pyproject_toml": "[project]\nname = 'pkg'\n"}, None),
        ({}, None),
    ],
)
def test_what_the_configuration_installs(
    tmp_path: Path, config: dict[str, str], installed: frozenset[str] | None
) -> None:
    assert installed_root_modules(_tree(tmp_path, **config)) == installed


def test_an_uninstalled_root_module_gives_no_targets(tmp_path: Path) -> None:
    control = discover_python(_tree(tmp_path / "control"))
    assert {t.symbol for t in control.targets} >= {"stress.hammer", "single.double"}
    setup = "from setuptools import setup\nsetup(packages=['pkg'], py_modules=['single'])\n"
    found = discover_python(_tree(tmp_path / "declared", setup_py=setup))
    symbols = {t.symbol for t in found.targets}
    assert "single.double" in symbols and "pkg.double" in symbols
    assert not any(s.startswith("stress") for s in symbols)
    assert [(s.path, s.reason) for s in found.skipped_files] == [("stress.py", NOT_INSTALLED)]
