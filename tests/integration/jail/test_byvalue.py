"""Callables carried by value: a lambda of the tests, pickled by cloudpickle at harvest time, is
rebuilt and called in the jail's runner, which loads cloudpickle's module file for such jobs."""

from __future__ import annotations

import base64
import importlib.util
import pickle
import sys
from pathlib import Path

import pytest

from replicate.core.records import GradingSettings
from replicate.grading.compare import compare_outcome
from replicate.harvest import by_value_pickler as harvest_byvalue
from replicate.harvest.by_value_pickler import ByValue
from replicate.jail import by_value_module
from replicate.jail.calls import RepoContext
from replicate.jail.runner import byvalue as runner_byvalue
from replicate.values import rendering
from tests.integration.jail.test_runner import run_runner
from tests.integration.minted import Tiny

APPLY = "def apply(fn, x):\n    return fn(x)\n"


def _by_value(obj: object) -> str:
    made = ByValue(by_value_module.module_file(), lambda _: False).dumps(obj, protocol=4)
    assert made is not None
    return base64.b64encode(made).decode()


def test_the_names_agree() -> None:
    assert by_value_module.MODULE == harvest_byvalue.MODULE == runner_byvalue.BY_VALUE_MODULE
    assert rendering.BY_VALUE == runner_byvalue.BY_VALUE_PREFIX
    assert by_value_module.module_file() is not None, "cloudpickle >= 3 is a dependency"


def test_a_local_lambda_is_rebuilt_and_called_in_the_runner(tmp_path: Path) -> None:
    k = 4
    blob = _by_value(((lambda v: v * 7 + k, 3), {}))
    try:  # the positive control: `pickle` itself refuses it
        pickle.dumps(lambda v: v)
        raise AssertionError("a local lambda pickled by name")
    except (pickle.PicklingError, AttributeError):
        pass
    assert by_value_module.needs_module([blob])
    done = run_runner(tmp_path, APPLY, "apply", [blob], by_value=True)
    assert done.outcome(0)["status"] == "returned", done.outcome(0)
    assert done.outcome(0)["value"] == {"t": "int", "v": "25"}


def test_without_the_flag_the_module_is_not_loaded(tmp_path: Path) -> None:
    """A job whose inputs need no by-value module never imports it (no cost), and one that
    needs it but is not flagged fails to load that input, alone."""
    plain = base64.b64encode(pickle.dumps(((abs, -3), {}))).decode()
    assert not by_value_module.needs_module([plain])
    blob = _by_value(((lambda v: v + 1, 1), {}))
    done = run_runner(tmp_path, APPLY, "apply", [plain, blob])
    assert done.outcome(0)["value"] == {"t": "int", "v": "3"}
    assert done.outcome(1)["status"] != "returned"
    probe = "import sys\ndef loaded(*_):\n    return 'replicate_cloudpickle' in sys.modules\n"
    run = run_runner(tmp_path, probe, "loaded", [plain], module="probe")
    assert run.outcome(0)["value"] == {"t": "bool", "v": False}
    flagged = run_runner(tmp_path, probe, "loaded", [plain], module="probe", by_value=True)
    assert flagged.outcome(0)["value"] == {"t": "bool", "v": True}  # the probe can tell


def test_test_modules_are_pickled_by_value(tmp_path: Path) -> None:
    """A module-level helper of a test module: `pickle` would name it (the jail cannot import
    the tests); registered by value, its code travels."""
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_helpers.py").write_text("def helper(v):\n    return v - 1\n")
    sys.path.insert(0, str(tests))
    try:
        import test_helpers  # type: ignore[import-not-found]

        made = ByValue(by_value_module.module_file(), lambda f: f.startswith(str(tests))).dumps(
            ((test_helpers.helper, 10), {}), protocol=4
        )
    finally:
        sys.path.remove(str(tests))
        sys.modules.pop("test_helpers", None)
    assert made is not None and b"test_helpers" in made
    blob = base64.b64encode(made).decode()
    jail = tmp_path / "jail"
    jail.mkdir()
    done = run_runner(jail, APPLY, "apply", [blob], by_value=True)
    assert done.outcome(0)["value"] == {"t": "int", "v": "9"}


HELPERS = "import sys\nimport json\n\ndef helper(v):\n    return v - 1\n"
PROBE = "import sys\ndef probe(fn, x):\n    return (fn(x), 'test_helpers2' in sys.modules)\n"


def test_a_pickle_naming_a_test_module_is_redone_by_value(tmp_path: Path) -> None:
    """`pickle` takes a module-level helper of a test module by name, and the jail then imports
    that module (and pytest with it, in a real suite) on every run; the harvest redoes such a
    pickle by value, and the jail imports nothing of the tests."""
    (tmp_path / "test_helpers2.py").write_text(HELPERS)
    sys.path.insert(0, str(tmp_path))
    try:
        import test_helpers2  # type: ignore[import-not-found]

        carry = ByValue(by_value_module.module_file(), lambda f: f.startswith(str(tmp_path)))
        plain = pickle.dumps(((test_helpers2.helper, 10), {}), protocol=4)
        assert carry.names_tests(plain)
        assert not carry.names_tests(pickle.dumps(((abs, -3), {}), protocol=4))
        made = carry.dumps(((test_helpers2.helper, 10), {}), protocol=4)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("test_helpers2", None)
    assert made is not None
    by_name = run_runner(tmp_path, PROBE, "probe", [base64.b64encode(plain).decode()])
    assert by_name.outcome(0)["value"]["v"][1] == {"t": "bool", "v": True}  # the control
    blob = base64.b64encode(made).decode()
    done = run_runner(tmp_path, PROBE, "probe", [blob], by_value=True)
    assert done.outcome(0)["value"]["v"] == [{"t": "int", "v": "9"}, {"t": "bool", "v": False}]


def test_a_callable_in_an_outcome_compares_by_what_came_with_the_input(tmp_path: Path) -> None:
    """A target that returns (or keeps) the callable it was given: the outcome names it by its
    place among what the input rebuilt, the same in the reference's run and a candidate's; a
    different function with the same name does not match it."""
    blob = _by_value(((lambda v: v, [3, 1, 2]), {}))
    keep = "def keep(fn, items):\n    return (fn, sorted(items, key=fn))\n"
    impostor = (
        "def keep(fn, items):\n"
        "    other = lambda v: v\n"
        "    other.__qualname__, other.__module__ = fn.__qualname__, fn.__module__\n"
        "    return (other, sorted(items))\n"
    )
    for sub in "abc":
        (tmp_path / sub).mkdir()
    first = run_runner(tmp_path / "a", keep, "keep", [blob], by_value=True)
    second = run_runner(tmp_path / "b", keep, "keep", [blob], by_value=True)
    forged = run_runner(tmp_path / "c", impostor, "keep", [blob], by_value=True)
    expected = first.outcome(0)
    name = expected["value"]["v"][0]["v"]
    assert name.startswith(runner_byvalue.BY_VALUE_PREFIX) and name.endswith("<lambda>#0"), name
    settings = GradingSettings()
    assert compare_outcome(expected, second.outcome(0), settings) is None
    assert compare_outcome(expected, forged.outcome(0), settings) is not None


def test_the_shipped_file_is_readable_by_any_sandbox_user() -> None:
    """The docker and plain sandboxes run the jail as another user (nobody)."""
    path = Path(str(by_value_module.module_file()))
    assert path.name == f"{by_value_module.MODULE}.py"
    assert path.stat().st_mode & 0o444 == 0o444
    path.chmod(0o600)  # a copy an older version left unreadable is repaired
    by_value_module.module_file.cache_clear()
    assert Path(str(by_value_module.module_file())).stat().st_mode & 0o444 == 0o444


def test_the_module_s_bytecode_lies_beside_it_and_is_loaded_without_compiling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.machinery

    path = str(by_value_module.module_file())
    pyc = Path(importlib.util.cache_from_source(path))
    assert pyc.is_file() and pyc.stat().st_mode & 0o444 == 0o444

    def no_compile(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled from source")

    monkeypatch.setattr(importlib.machinery.SourceFileLoader, "source_to_code", no_compile)
    loader = importlib.machinery.SourceFileLoader(by_value_module.MODULE, path)
    assert loader.get_code(by_value_module.MODULE) is not None  # from the bytecode
    saved = pyc.read_bytes()
    pyc.unlink()  # the control: without it the loader compiles the source
    try:
        with pytest.raises(AssertionError, match="compiled from source"):
            loader.get_code(by_value_module.MODULE)
    finally:
        pyc.write_bytes(saved)


def test_a_jail_sees_the_module_s_bytecode_beside_it(tiny: Tiny, tiny_ctx: RepoContext) -> None:
    from replicate.grading.grader import original_source
    from replicate.jail import Jail
    from replicate.sandbox import get_sandbox

    pyc = Path(importlib.util.cache_from_source(str(by_value_module.module_file())))
    task = tiny.task("tinypkg.core.clamp")
    looks = "\n\ndef clamp(value, low, high):\n    import os\n    return os.path.isfile(PYC)\n"
    looks = looks.replace("PYC", repr(str(pyc)))
    program = original_source(task) + looks.encode()
    jail, grading = Jail(tiny_ctx, get_sandbox("local")), task.hidden.grading
    seen = []
    for present in (True, False):
        saved = pyc.read_bytes()
        if not present:  # the control: the same look finds nothing once the file is gone
            pyc.unlink()
        try:
            run = jail.run(task.hidden.target, task.inputs[:1], grading, override=program)
        finally:
            pyc.write_bytes(saved)
        seen.append(run.parsed.outcomes[task.inputs[0].index]["value"])
    assert seen == [{"t": "bool", "v": True}, {"t": "bool", "v": False}]


MODULE_TEXT = """
OFFSET = 3
F = lambda v: v + OFFSET  # noqa: E731

class Local:
    def __init__(self, n):
        self.n = n

def make():
    return Local(2), F
"""


def _pickled_from(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bytes, bytes]:
    """A lambda and an instance of a class of a test module at `root`, pickled by value the way
    the harvest does, from `root` as the working directory."""
    (root / "tests").mkdir(parents=True)
    path = root / "tests" / "test_repro.py"
    path.write_text(MODULE_TEXT)
    monkeypatch.chdir(root)
    spec = importlib.util.spec_from_file_location("test_repro", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["test_repro"] = module
    try:
        spec.loader.exec_module(module)
        made = ByValue(by_value_module.module_file(), lambda f: f.startswith(str(root))).dumps(
            (module.make(), {}), protocol=4
        )
        stock = sys.modules[by_value_module.MODULE].dumps((module.make(), {}), protocol=4)
    finally:
        sys.modules.pop("test_repro", None)
    assert made is not None
    return made, stock


def test_the_same_tests_pickle_to_the_same_bytes_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harvest runs the tests in a fresh scratch copy each gen: neither that folder's path
    nor cloudpickle's random class ids may reach the pickles (a batch re-mints byte-identical)."""
    first, stock = _pickled_from(tmp_path / "one", monkeypatch)
    second, _ = _pickled_from(tmp_path / "two", monkeypatch)
    assert str(tmp_path / "one").encode() in stock  # the positive control: cloudpickle as it is
    assert b"tests/test_repro.py" in first  # relative to the working directory
    assert str(tmp_path).encode() not in first
    assert first == second
    jail = tmp_path / "jail"
    jail.mkdir()
    blob = base64.b64encode(first).decode()
    source = "def first(local, fn):\n    return fn(local.n)\n"
    done = run_runner(jail, source, "first", [blob], by_value=True)
    assert done.outcome(0).get("value") == {"t": "int", "v": "5"}, done.outcome(0)
