"""The example agent (examples/prepared_agent.py) against a temp copy of corpus/samplelib."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "corpus" / "samplelib"
AGENT = REPO / "examples" / "prepared_agent.py"
ATTEMPTS = REPO / "examples" / "attempts"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(CORPUS, ws, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    (ws / "TASK.md").write_text("# task\n", encoding="utf-8")
    return ws


@pytest.fixture(scope="module")
def agent() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("prepared_agent", AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["prepared_agent"] = module  # dataclasses look their module up here
    no_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True  # keep examples/ clean
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.dont_write_bytecode = no_bytecode
        sys.modules.pop("prepared_agent", None)


def protocol_env(ws: Path, target_file: str, symbol: str) -> dict[str, str]:
    return {
        "REPLICATE_TASK_ID": "samplelib-test",
        "REPLICATE_WORKSPACE": str(ws),
        "REPLICATE_PROMPT": str(ws / "TASK.md"),
        "REPLICATE_TARGET_FILE": target_file,
        "REPLICATE_TARGET": symbol,
    }


def run_agent(ws: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"}
    return subprocess.run(
        [sys.executable, str(AGENT)],
        cwd=ws,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def find_def(source: str, qualname: list[str]) -> ast.FunctionDef:
    body: list[ast.stmt] = ast.parse(source).body
    for name in qualname[:-1]:
        body = next(s for s in body if isinstance(s, ast.ClassDef) and s.name == name).body
    return next(s for s in body if isinstance(s, ast.FunctionDef) and s.name == qualname[-1])


def def_text(source: str, node: ast.FunctionDef) -> str:
    assert node.end_lineno is not None
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return "".join(source.splitlines(keepends=True)[start - 1 : node.end_lineno])


def attempt_def(symbol: str, indent: str) -> str:
    """The attempt's definition without its header comment, indented like the target."""
    text = (ATTEMPTS / f"{symbol}.py").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("#")]
    return "".join(indent + line if line.strip() else line for line in lines)


def outside(source: str, node: ast.FunctionDef) -> tuple[str, str]:
    assert node.end_lineno is not None
    lines = source.splitlines(keepends=True)
    return "".join(lines[: node.lineno - 1]), "".join(lines[node.end_lineno :])


@pytest.mark.parametrize(
    ("target_file", "symbol", "qualname", "indent"),
    [
        ("src/samplelib/text.py", "samplelib.text.slugify", ["slugify"], ""),
        (
            "src/samplelib/accounts.py",
            "samplelib.accounts.Account.withdraw",
            ["Account", "withdraw"],
            "    ",
        ),
    ],
)
def test_agent_replaces_target_with_attempt(
    workspace: Path, target_file: str, symbol: str, qualname: list[str], indent: str
) -> None:
    path = workspace / target_file
    before = path.read_text(encoding="utf-8")
    proc = run_agent(workspace, protocol_env(workspace, target_file, symbol))
    assert proc.returncode == 0, proc.stderr
    after = path.read_text(encoding="utf-8")
    assert after != before
    compile(after, str(path), "exec")
    new_node = find_def(after, qualname)
    assert def_text(after, new_node) == attempt_def(symbol, indent)
    assert outside(after, new_node) == outside(before, find_def(before, qualname))


def test_agent_without_attempt_changes_nothing(workspace: Path) -> None:
    path = workspace / "src/samplelib/text.py"
    before = path.read_bytes()
    env = protocol_env(workspace, "src/samplelib/text.py", "samplelib.text.levenshtein")
    proc = run_agent(workspace, env)
    assert proc.returncode == 0, proc.stderr
    assert "no_attempt" in proc.stdout
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"REPLICATE_TARGET": ""}, "REPLICATE_TARGET"),
        ({"REPLICATE_TARGET_FILE": "/etc/passwd"}, "relative .py path"),
        ({"REPLICATE_TARGET_FILE": "../outside.py"}, "not found inside the workspace"),
        ({"REPLICATE_TARGET": "samplelib.text.no_such"}, "not defined"),
        ({"REPLICATE_TARGET": "samplelib.text.slugify; rm"}, "not a dotted symbol"),
        ({"REPLICATE_TARGET_FILE": "src/samplelib/numeric.py"}, "not defined"),
    ],
)
def test_agent_rejects_malformed_input(
    workspace: Path, change: dict[str, str], message: str
) -> None:
    (workspace.parent / "outside.py").write_text("def slugify():\n    pass\n", encoding="utf-8")
    env = {**protocol_env(workspace, "src/samplelib/text.py", "samplelib.text.slugify"), **change}
    before = (workspace / "src/samplelib/text.py").read_bytes()
    proc = run_agent(workspace, env)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (workspace / "src/samplelib/text.py").read_bytes() == before


def test_target_decorators_kept_when_attempt_has_none(
    agent: ModuleType, workspace: Path, tmp_path: Path
) -> None:
    attempts = tmp_path / "attempts"
    attempts.mkdir()
    (attempts / "samplelib.accounts.Account.from_record.py").write_text(
        "# attempt: test\ndef from_record(cls, record):\n    return cls(record)\n",
        encoding="utf-8",
    )
    (attempts / "samplelib.accounts.Account.format_cents.py").write_text(
        '@staticmethod\ndef format_cents(cents):\n    return f"{cents}c"\n', encoding="utf-8"
    )
    target = "src/samplelib/accounts.py"
    for symbol in (
        "samplelib.accounts.Account.from_record",
        "samplelib.accounts.Account.format_cents",
    ):
        env = protocol_env(workspace, target, symbol)
        assert agent.main(env, attempts) == 0
    after = (workspace / target).read_text(encoding="utf-8")
    assert (
        "    @classmethod\n    def from_record(cls, record):\n        return cls(record)\n" in after
    )
    assert '    @staticmethod\n    def format_cents(cents):\n        return f"{cents}c"\n' in after
    assert after.count("@staticmethod") == 2


def test_multiline_strings_and_crlf_survive(agent: ModuleType, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    target = ws / "pkg" / "mod.py"
    target.write_bytes(
        b"class Box:\r\n\tdef show(self):\r\n\t\traise NotImplementedError\r\n\r\nX = 1\r\n"
    )
    attempts = tmp_path / "attempts"
    attempts.mkdir()
    (attempts / "pkg.mod.Box.show.py").write_text(
        'def show(self):\n    text = """first\nsecond\n    third"""\n    return text\n',
        encoding="utf-8",
    )
    assert agent.main(protocol_env(ws, "pkg/mod.py", "pkg.mod.Box.show"), attempts) == 0
    assert target.read_bytes() == (
        b'class Box:\r\n\tdef show(self):\r\n\t    text = """first\r\nsecond\r\n    third"""\r\n'
        b"\t    return text\r\n\r\nX = 1\r\n"
    )
    namespace: dict[str, object] = {}
    exec(compile(target.read_bytes().decode(), "mod.py", "exec"), namespace)
    box = namespace["Box"]
    assert box().show() == "first\nsecond\n    third"  # type: ignore[operator]


def test_bad_attempt_file_is_an_error(agent: ModuleType, workspace: Path, tmp_path: Path) -> None:
    attempts = tmp_path / "attempts"
    attempts.mkdir()
    env = protocol_env(workspace, "src/samplelib/text.py", "samplelib.text.slugify")
    attempt = attempts / "samplelib.text.slugify.py"
    before = (workspace / "src/samplelib/text.py").read_bytes()
    for bad in (
        "import os\ndef slugify(t):\n    return t\n",
        "def slug(t):\n    return t\n",
        "def (",
    ):
        attempt.write_text(bad, encoding="utf-8")
        assert agent.main(env, attempts) == 2
    assert (workspace / "src/samplelib/text.py").read_bytes() == before


def test_log_written_only_when_asked(workspace: Path) -> None:
    log = workspace.parent / "agent.jsonl"
    env = protocol_env(workspace, "src/samplelib/numeric.py", "samplelib.numeric.mean")
    assert run_agent(workspace, env).returncode == 0
    assert not log.exists()
    assert run_agent(workspace, {**env, "EXAMPLE_AGENT_LOG": str(log)}).returncode == 0
    record = json.loads(log.read_text(encoding="utf-8"))
    assert record == {
        "action": "applied",
        "file": "src/samplelib/numeric.py",
        "target": "samplelib.numeric.mean",
        "task_id": "samplelib-test",
    }


def attempt_labels() -> dict[str, str]:
    labels = {}
    for path in sorted(ATTEMPTS.glob("*.py")):
        header = path.read_text(encoding="utf-8").splitlines()[0]
        assert header.startswith("# attempt: "), path.name
        labels[path.name[:-3]] = header.removeprefix("# attempt: ").split(" ", 1)[0]
    return labels


def run_corpus_tests(ws: Path, test_file: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", test_file],
        cwd=ws,
        env={"PATH": os.environ.get("PATH", ""), "PYTHONPATH": "src", "LC_ALL": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_attempt_labels_cover_all_kinds() -> None:
    labels = attempt_labels()
    counts = {kind: list(labels.values()).count(kind) for kind in ("correct", "partial", "wrong")}
    assert sum(counts.values()) == len(labels) >= 12
    assert counts["correct"] >= 4 and counts["partial"] >= 3 and counts["wrong"] >= 3


def test_correct_attempts_pass_the_corpus_suite(agent: ModuleType, workspace: Path) -> None:
    for symbol, label in attempt_labels().items():
        if label == "correct":
            target = f"src/samplelib/{symbol.split('.')[1]}.py"
            assert agent.main(protocol_env(workspace, target, symbol)) == 0
    proc = run_corpus_tests(workspace, "tests")
    assert proc.returncode == 0, proc.stdout[-2000:]


@pytest.mark.parametrize(
    "symbol", [s for s, label in attempt_labels().items() if label != "correct"]
)
def test_flawed_attempts_fail_the_corpus_suite(
    agent: ModuleType, workspace: Path, symbol: str
) -> None:
    module = symbol.split(".")[1]
    assert agent.main(protocol_env(workspace, f"src/samplelib/{module}.py", symbol)) == 0
    proc = run_corpus_tests(workspace, f"tests/test_{module}.py")
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "failed" in proc.stdout
