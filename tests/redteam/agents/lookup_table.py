"""Catalogue item 16: a lookup table of the calls the workspace shows, and nothing else.

The table comes from the prompt's examples and doctest (`call` -> `result`) and from the
repository's own tests, run with a pytest plugin that swaps the target for a probe: the probe
records what each assertion compares its result with (`assert f(x) == y`), and `pytest.raises`
records which exception a call must raise.  The candidate answers from the table.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import _common

PLUGIN = """
import importlib
import json

import pytest

RECORD = []
_EXPECTING = []


class _Probe:
    def __init__(self, key):
        self.key = key

    def __eq__(self, other):
        RECORD.append((self.key, "returned", repr(other)))
        return True

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__


class _Raises:
    def __init__(self, exc, *args, **kwargs):
        self.exc = exc[0] if isinstance(exc, tuple) else exc

    def __enter__(self):
        _EXPECTING.append(self.exc)
        return self

    def __exit__(self, kind, value, tb):
        _EXPECTING.pop()
        return kind is not None


def _stub(*args, **kwargs):
    key = repr((tuple(args), kwargs))
    if _EXPECTING:
        RECORD.append((key, "raised", _EXPECTING[-1].__name__))
        raise _EXPECTING[-1]("probe")
    return _Probe(key)


def pytest_configure(config):
    pytest.raises = _Raises
    owner = importlib.import_module({module!r})
    *path, name = {qualname!r}.split(".")
    for part in path:
        owner = getattr(owner, part)
    setattr(owner, name, staticmethod(_stub) if path else _stub)


def pytest_unconfigure(config):
    with open({out!r}, "w") as handle:
        json.dump(RECORD, handle)
"""


def from_prompt(name: str) -> dict[str, tuple[str, object]]:
    """`name(args)` -> result pairs from TASK.md's examples and doctest."""
    text = Path(os.environ["REPLICATE_PROMPT"]).read_text("utf-8")
    pairs = re.findall(r"- `(" + name + r"\(.*\))` → `(.*)`", text)
    pairs += re.findall(r">>> (" + name + r"\(.*\))\n(.+)", text)
    table: dict[str, tuple[str, object]] = {}
    for call, result in pairs:
        try:
            node = ast.parse(call, mode="eval").body
            assert isinstance(node, ast.Call)
            call_args = tuple(ast.literal_eval(a) for a in node.args)
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            table[repr((call_args, kwargs))] = ("returned", ast.literal_eval(result))
        except (ValueError, SyntaxError, AssertionError):
            continue
    return table


def from_tests(module: str, qualname: str) -> dict[str, tuple[str, object]]:
    scratch = Path(tempfile.mkdtemp())
    out = scratch / "record.json"
    plugin = PLUGIN.format(module=module, qualname=qualname, out=str(out))
    (scratch / "rt_probe.py").write_text(plugin, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{scratch}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "rt_probe", "-p", "no:cacheprovider"],
        cwd=_common.workspace(),
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    table: dict[str, tuple[str, object]] = {}
    for key, status, value in json.loads(out.read_text("utf-8")) if out.exists() else []:
        try:
            table[key] = (status, value if status == "raised" else ast.literal_eval(value))
        except (ValueError, SyntaxError):
            continue
    return table


def main() -> None:
    _kind, cls = _common.target_kind()
    qualname = f"{cls}.{_common.target_name()}" if cls else _common.target_name()
    table = from_prompt(_common.target_name())
    table.update(from_tests(_common.module_name(), qualname))
    _common.table_candidate(table)


if __name__ == "__main__":
    main()
