"""The in-jail runner: stdlib only, exact-type encoding, and its protocol end to end.

End-to-end tests write a tiny candidate module into a tmp dir and run the runner exactly as the
jail does (`python -I -S runner.py`, job on stdin, frames on a pipe passed as the channel fd),
then parse the channel as the trusted side does (`timed_frames`, no arrivals noted).
"""

from __future__ import annotations

import ast
import base64
import builtins
import collections
import datetime
import decimal
import enum
import importlib
import json
import math
import os
import pickle
import secrets
import subprocess
import sys
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.core.records import GradingSettings
from replicate.grading.compare import compare_outcome, same_outcome
from replicate.jail import by_value_module, runner, wire
from replicate.jail.calltime import CallClock, timed_frames
from replicate.jail.frames import ParsedRun, collect_frames
from replicate.jail.runner import base, calling, channel
from replicate.jail.runner.base import EncodeLimits
from replicate.jail.runner.encoding import encode, exception_record

RUNNER_DIR = Path(runner.__file__).parent
RUNNER = RUNNER_DIR / "__main__.py"  # what the jail starts
WIRE = Path(wire.__file__)
SETTINGS = GradingSettings()


# ---------------------------------------------------------------- subprocess helper


@dataclass
class Run:
    parsed: ParsedRun
    stdout: bytes
    stderr: bytes
    returncode: int
    nonce: str

    def outcome(self, index: int) -> dict[str, Any]:
        return dict(self.parsed.outcomes[index])


def _blob(args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None) -> str:
    return base64.b64encode(pickle.dumps((tuple(args), kwargs or {}))).decode()


def run_runner(
    tmp_path: Path,
    source: str,
    qualname: str,
    inputs: Sequence[str],
    *,
    module: str = "cand",
    kind: str = "function",
    timeout: float = 1.0,
    max_items: int = 10_000,
    max_arg_items: int | None = None,
    arg_reads: bool = False,
    encode_inputs: bool = False,
    flags: Sequence[str] = ("-I", "-S"),
    env: dict[str, str] | None = None,
    nonce: str | None = None,
    by_value: bool = False,
) -> Run:
    """Run the real runner file on `inputs` (pickle_b64 blobs) against `source` as `module`."""
    (tmp_path / f"{module}.py").write_text(source)
    nonce = nonce or secrets.token_hex(8)
    read_fd, write_fd = os.pipe()
    job = {
        "nonce": nonce,
        "module": module,
        "qualname": qualname,
        "kind": kind,
        "inputs": [{"i": n, "pickle_b64": blob} for n, blob in enumerate(inputs)],
        "call_timeout_s": timeout,
        "max_items": max_items,
        "max_depth": 64,
        "max_bytes": 1_000_000,
        "channel_fd": write_fd,
        "encode_inputs": encode_inputs,
        "by_value": by_value,
    }
    if max_arg_items is not None:
        job["max_arg_items"] = max_arg_items
    if arg_reads:
        job["arg_reads"] = True
    # argv[1], as the jail passes it
    setup = {
        "sys_path": [str(tmp_path)],
        "site_dirs": [],
        "by_value": by_value_module.module_file(),
    }
    chunks: list[bytes] = []

    def drain() -> None:
        with os.fdopen(read_fd, "rb") as channel:
            chunks.append(channel.read())

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        proc = subprocess.run(
            [sys.executable, *flags, str(RUNNER), json.dumps(setup)],
            input=json.dumps(job).encode(),
            capture_output=True,
            pass_fds=(write_fd,),
            env=env if env is not None else {"PATH": os.environ.get("PATH", "")},
            timeout=30,
            cwd=tmp_path,
        )
    finally:
        os.close(write_fd)
        reader.join(timeout=30)
    clock = CallClock(order=(), call_timeout_s=30.0)  # unused: no arrival noted
    parsed = collect_frames(timed_frames(b"".join(chunks), (), nonce, clock))
    return Run(parsed, proc.stdout, proc.stderr, proc.returncode, nonce)


def printed_under_seeds(code: str, seeds: Sequence[str]) -> list[bytes]:
    """What `code` prints under each hash seed: shows the seeds really change an order."""
    return [
        subprocess.run(
            [sys.executable, "-P", "-s", "-S", "-c", code],
            capture_output=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout
        for seed in seeds
    ]


def _load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, source: str) -> Any:
    """Import the candidate module in this process too, so its instances can be pickled."""
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(name)


# ---------------------------------------------------------------- stdlib only


def _run_time_imports(source: str) -> set[str]:
    """Top-level names of the modules `source` imports when it runs: an import under
    ``if TYPE_CHECKING:`` is for the type checker only and never runs."""
    tree = ast.parse(source)
    skipped = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level:
            assert node.level == 1, "a relative import from outside the runner's package"
            names.add("." + (node.module or ""))  # a part of the runner's own package
        elif isinstance(node, ast.ImportFrom):
            names.add((node.module or "").split(".")[0])
    names.discard("__future__")
    return names


def test_the_import_check_sees_imports_that_run() -> None:
    source = "import os\nif TYPE_CHECKING:\n    import numpy\nelse:\n    from replicate import x\n"
    assert _run_time_imports(source) == {"os", "replicate"}


PARTS = {p.stem for p in RUNNER_DIR.glob("*.py") if not p.stem.startswith("__")}
SHIPPED = {
    **{f"runner/{p.name}": p for p in sorted(RUNNER_DIR.glob("*.py"))},
    "wire": WIRE,
    "by-value": Path(str(by_value_module.module_file())),
}


@pytest.mark.parametrize("shipped", SHIPPED.values(), ids=SHIPPED.keys())
def test_what_the_jail_runs_imports_only_the_standard_library(shipped: Path) -> None:
    names = _run_time_imports(shipped.read_text())
    if shipped == RUNNER_DIR / "__init__.py":  # the package's docstring alone
        assert [type(node) for node in ast.parse(shipped.read_text()).body] == [ast.Expr]
        return
    assert names, "no imports found: the check would prove nothing"
    parts = {n[1:] for n in names if n.startswith(".")}
    outside = sorted(
        n for n in names - {f".{p}" for p in parts} if n not in sys.stdlib_module_names
    )
    assert outside == []
    assert parts <= PARTS  # the runner's own parts, shipped beside it
    assert "replicate" not in names


def test_the_jail_imports_every_part_before_the_parts_that_need_it() -> None:
    """`__main__` imports the parts in its order before the runner's setup puts the
    repository's paths first; each part imports only parts before it (no part is left to be
    found later, where a repository's module of that name could stand in)."""
    from replicate.jail.runner.__main__ import PARTS as BOOT

    assert set(BOOT) == PARTS and len(BOOT) == len(PARTS)
    for k, part in enumerate(BOOT):
        names = _run_time_imports((RUNNER_DIR / f"{part}.py").read_text())
        needs = {n[1:] for n in names if n.startswith(".")}
        assert needs <= set(BOOT[:k]), f"{part} imports {sorted(needs - set(BOOT[:k]))} later"


def test_the_runner_loads_the_wire_module_shipped_beside_it() -> None:
    assert Path(base.wire_beside(str(RUNNER))) == WIRE
    assert base.wire_beside("/c/runner/k/runner/base.pyc") == "/c/runner/k/wire.pyc"
    assert base.wire.RECIPE_TAG == wire.RECIPE_TAG
    assert base.wire is not wire and "replicate_wire" not in sys.modules  # loaded from its file


def test_runs_isolated_without_site_packages(tmp_path: Path) -> None:
    source = "import sys\ndef f(x):\n    return [x, 'site' in sys.modules, sys.flags.no_site]\n"
    run = run_runner(tmp_path, source, "f", [_blob([2])])
    assert run.parsed.ready and run.parsed.done, run.stderr
    assert run.parsed.rejected_frames == 0
    value = run.outcome(0)["value"]
    assert value == encode([2, True, 1])  # `site` only as the runner imports it, -S in force
    assert run.outcome(0)["status"] == "returned"


# ---------------------------------------------------------------- encoding, in process


class Color(enum.Enum):
    RED = 1


class MyInt(int):
    def __int__(self) -> int:
        raise AssertionError("a subclass method was called")

    def __repr__(self) -> str:
        raise AssertionError("a subclass method was called")


class Loud(list):
    def __iter__(self) -> Any:
        raise AssertionError("a subclass method was called")


class AlwaysEq:
    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class HiddenDict:
    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        raise AssertionError("a candidate property was called")


@dataclass
class Point:
    x: int
    y: list[int]


Pair = collections.namedtuple("Pair", "a b")

TAGS: list[tuple[Any, str]] = [
    (None, "none"),
    (True, "bool"),
    (7, "int"),
    (1.5, "float"),
    (1 + 2j, "complex"),
    ("s", "str"),
    (b"b", "bytes"),
    (bytearray(b"x"), "bytearray"),
    ([1], "list"),
    ((1,), "tuple"),
    ({1}, "set"),
    (frozenset({1}), "frozenset"),
    ({"a": 1}, "dict"),
    (range(3), "range"),
    (slice(1, 2), "slice"),
    (NotImplemented, "notimplemented"),
    (Ellipsis, "ellipsis"),
    (len, "ref"),
    (int, "ref"),
    (collections.OrderedDict(a=1), "odict"),
    (collections.defaultdict(list), "defaultdict"),
    (collections.Counter("ab"), "counter"),
    (collections.deque([1]), "deque"),
    (datetime.datetime(2020, 1, 2, tzinfo=datetime.UTC), "datetime"),
    (datetime.date(2020, 1, 2), "date"),
    (datetime.time(3, 4), "time"),
    (datetime.timedelta(1), "timedelta"),
    (decimal.Decimal("1.10"), "decimal"),
    (Path("/a"), "path"),
    (iter([1]), "iter"),
    (MyInt(3), "sub"),
    (Pair(1, 2), "sub"),
    (Point(1, [2]), "obj"),
    (uuid.UUID(int=5), "obj"),
    (Color.RED, "obj"),
    (ValueError("x"), "exc"),
    (object(), "opaque"),
    (json, "module"),
]


@pytest.mark.parametrize(("value", "tag"), TAGS, ids=[t for _, t in TAGS])
def test_every_tag_round_trips_through_json_and_matches_itself(value: Any, tag: str) -> None:
    tagged = encode(value)
    assert tagged["t"] == tag
    text = channel._dumps(tagged)
    assert json.loads(text) == tagged  # the runner's own JSON writer is plain JSON
    settle = {"status": "returned", "value": json.loads(text), "args": [], "kwargs": {}}
    if tag == "opaque":
        assert compare_outcome(settle, settle, SETTINGS) is not None
    else:
        assert compare_outcome(settle, settle, SETTINGS) is None


def test_exact_values() -> None:
    assert encode(-0.0) == {"t": "float", "v": "-0x0.0p+0"}
    assert encode(float("nan")) == {"t": "float", "v": "nan"}
    assert encode(2**100) == {"t": "int", "v": str(2**100)}
    assert encode(True) != encode(1)
    assert encode([1]) != encode((1,))
    assert encode(b"\x00\xff") == {"t": "bytes", "v": "AP8="}
    assert encode({"b": 1, "a": 2})["v"][0][0] == {"t": "str", "v": "b"}  # insertion order kept


def test_sets_are_in_canonical_order() -> None:
    a = encode({"pear", "apple", "fig", 3})
    b = encode({3, "fig", "apple", "pear"})
    assert a == b
    assert [channel._dumps(x) for x in a["v"]] == sorted(channel._dumps(x) for x in a["v"])


def test_subclasses_are_read_through_the_builtin_without_calling_overrides() -> None:
    assert encode(MyInt(3)) == {
        "t": "sub",
        "type": f"{__name__}.MyInt",
        "base": {"t": "int", "v": "3"},
        "fields": {},
    }
    loud = Loud([1, 2])
    assert encode(loud)["base"] == encode([1, 2])
    assert encode(Pair(1, 2))["base"] == encode((1, 2))


def test_objects_by_fields_without_calling_methods() -> None:
    assert encode(Point(1, [2])) == {
        "t": "obj",
        "type": f"{__name__}.Point",
        "fields": {"x": encode(1), "y": encode([2])},
    }
    assert encode(AlwaysEq())["fields"] == {}
    assert encode(HiddenDict())["t"] == "opaque"  # a fake __dict__ hides the real one


def test_metaclass_equality_does_not_fool_type_dispatch() -> None:
    class Meta(type):
        def __eq__(cls, other: object) -> bool:
            return True

        def __hash__(cls) -> int:
            return hash(bool)

    class Fake(metaclass=Meta):
        pass

    assert {bool: "bool"}.get(Fake) == "bool"  # a dict keyed by type is fooled
    assert encode(Fake())["t"] == "obj"


def test_objects_with_hidden_c_state_are_opaque() -> None:
    import array
    import random

    class MyRandom(random.Random):
        pass

    class MyArray(array.array):
        pass

    assert encode(random.Random(1))["t"] == "opaque"
    assert encode(MyRandom(1))["t"] == "opaque"  # a __dict__, but the state is in C
    assert encode(array.array("i", [1]))["t"] == "opaque"
    assert encode(MyArray("i", [1]))["t"] == "opaque"


def test_lookalike_names_are_unverified() -> None:
    class ValueError(Exception):
        pass

    ValueError.__module__ = "builtins"
    ValueError.__qualname__ = "ValueError"
    record = exception_record(ValueError("bad"))
    assert record["type"] == "<unverified>builtins.ValueError"
    assert exception_record(builtins.ValueError("bad"))["type"] == "builtins.ValueError"
    assert encode(ValueError)["v"].startswith("<unverified>")


def test_limits_cycle_depth_size_items() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert encode(loop)["v"][1] == {"t": "cycle"}
    shared = [1]
    assert encode([shared, shared])["v"][1] == encode([1])  # shared is not a cycle
    assert encode([[[1]]], EncodeLimits(max_depth=1))["v"][0]["v"][0] == {"t": "deep"}
    assert encode(list(range(1000)), EncodeLimits(max_bytes=500)) == {"t": "toolarge"}
    assert encode("x" * 400, EncodeLimits(max_bytes=500))["v"] == "x" * 400  # kept whole
    assert encode("x" * 600, EncodeLimits(max_bytes=500)) == {"t": "toolarge"}


def test_generator_consumed_with_bound_and_midway_exception() -> None:
    def forever() -> Any:
        n = 0
        while True:
            yield n
            n += 1

    def breaks() -> Any:
        yield 1
        raise KeyError("k")

    tagged = encode(forever(), EncodeLimits(max_items=5))
    assert tagged["truncated"] is True
    assert tagged["v"] == [encode(n) for n in range(5)]
    broken = encode(breaks())
    assert broken["v"] == [encode(1)]
    assert broken["raised"] == {"type": "builtins.KeyError", "msg": "'k'"}


# ---------------------------------------------------------------- end to end


def test_returned_raised_and_arguments_after_call(tmp_path: Path) -> None:
    source = (
        "def f(items, key=None):\n"
        "    items.append(key)\n"
        "    if key == 'bad':\n"
        "        raise ValueError('bad key')\n"
        "    return len(items)\n"
    )
    run = run_runner(tmp_path, source, "f", [_blob([[1]], {"key": 2}), _blob([[]], {"key": "bad"})])
    first, second = run.outcome(0), run.outcome(1)
    assert first["status"] == "returned" and first["value"] == encode(2)
    assert first["args"] == [encode([1, 2])] and first["kwargs"] == {"key": encode(2)}
    assert second["status"] == "raised"
    assert second["exc"] == {"type": "builtins.ValueError", "msg": "bad key"}
    assert second["args"] == [encode(["bad"])]
    assert run.parsed.done


READS_ONE = "def f(it):\n    next(it)\n    return iter(range(3000))\n"


SLIDES = (
    "from itertools import islice, tee\n"
    "def f(a, b):\n"
    "    ts = tee(a, 3)\n"
    "    for i, t in enumerate(ts):\n"
    "        next(islice(t, i, i), None)\n"
    "    return zip(*ts)\n"
)


def test_a_job_with_arg_reads_reports_how_far_each_iterator_argument_was_read(
    tmp_path: Path,
) -> None:
    """The real runner, through its channel: one iterator pickled into two slots of one call
    is one object in the jail (pickle's memo), and its node in both slots carries the items it
    had yielded when the call returned and once its result was read (wire.READ)."""
    shared = iter([1, 2, 3, 4])
    inputs = [_blob([shared, shared]), _blob([iter([1, 2, 3, 4]), iter([1, 2, 3, 4])])]
    run = run_runner(tmp_path, SLIDES, "f", inputs, max_arg_items=1_000, arg_reads=True)
    aliased, apart = run.outcome(0), run.outcome(1)
    assert [node[wire.READ] for node in aliased["args"]] == [[2, 4], [2, 4]]
    assert [node[wire.READ] for node in apart["args"]] == [[2, 4], [0, 0]]
    # the control: a job without the field (a task minted by grader 6) reports no counts
    plain_run = run_runner(tmp_path, SLIDES, "f", inputs[:1], max_arg_items=1_000, module="old")
    assert all(wire.READ not in node for node in plain_run.outcome(0)["args"])


def test_an_iterator_argument_is_kept_to_its_own_cap(tmp_path: Path) -> None:
    """After the call, an iterator argument keeps `max_arg_items` items (what is left of it),
    the returned iterator `max_items`; the inputs reported at gen time are arguments too."""
    inputs = [_blob([iter(range(5000))])]
    run = run_runner(
        tmp_path, READS_ONE, "f", inputs, max_arg_items=1_000, encode_inputs=True, module="capped"
    )
    out = run.outcome(0)
    assert out["value"]["truncated"] is False and len(out["value"]["v"]) == 3000
    left = out["args"][0]
    assert left["truncated"] is True and left["v"] == [encode(n) for n in range(1, 1001)]
    assert out["args_in"][0]["truncated"] is True and len(out["args_in"][0]["v"]) == 1000
    # the control: a job without the field (a task minted by grader 5) keeps max_items
    whole = run_runner(tmp_path, READS_ONE, "f", inputs, module="uncapped").outcome(0)
    assert whole["args"][0]["truncated"] is False and len(whole["args"][0]["v"]) == 4999


def test_the_capped_argument_still_shows_how_far_the_call_read(tmp_path: Path) -> None:
    reads_two = "def f(it):\n    next(it)\n    next(it)\n    return iter(range(3000))\n"
    inputs = [_blob([iter(range(5000))])]
    expected = run_runner(tmp_path, READS_ONE, "f", inputs, max_arg_items=1_000, module="one")
    got = run_runner(tmp_path, reads_two, "f", inputs, max_arg_items=1_000, module="two")
    mismatch = compare_outcome(expected.outcome(0), got.outcome(0), SETTINGS)
    assert mismatch is not None
    assert (mismatch.kind, mismatch.path, mismatch.expected) == (
        "args-after-call",
        "args[0][0]",
        "1",
    )


def test_argument_mutation_is_behaviour(tmp_path: Path) -> None:
    appends = "def f(xs):\n    xs.append(0)\n    return None\n"
    pure = "def f(xs):\n    return None\n"
    inputs = [_blob([[5]])]
    expected = run_runner(tmp_path, appends, "f", inputs, module="ref_mut").outcome(0)
    got = run_runner(tmp_path, pure, "f", inputs, module="cand_mut").outcome(0)
    mismatch = compare_outcome(expected, got, SETTINGS)
    assert mismatch is not None
    assert (mismatch.kind, mismatch.path) == ("args-after-call", "args[0]")
    assert (mismatch.expected, mismatch.got) == ("[5, 0]", "[5]")


def test_method_whose_self_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = "class Counter:\n    def __init__(self):\n        self.n = 0\n"
    ref_src = base + "    def bump(self, k):\n        self.n += k\n        return self.n\n"
    cand_src = base + "    def bump(self, k):\n        return self.n + k\n"
    mod = _load(tmp_path, monkeypatch, "meth_shared", ref_src)
    inputs = [_blob([mod.Counter(), 3])]
    (tmp_path / "meth_shared.py").write_text(ref_src)
    expected = run_runner(tmp_path, ref_src, "Counter.bump", inputs, module="meth_shared").outcome(
        0
    )
    got = run_runner(tmp_path, cand_src, "Counter.bump", inputs, module="meth_shared").outcome(0)
    assert expected["value"] == got["value"] == encode(3)
    assert expected["args"][0]["fields"] == {"n": encode(3)}
    mismatch = compare_outcome(expected, got, SETTINGS)
    assert mismatch is not None
    assert (mismatch.kind, mismatch.path) == ("args-after-call", "args[0].n")


def test_classmethod_and_staticmethod(tmp_path: Path) -> None:
    source = (
        "class K:\n"
        "    base = 10\n"
        "    @classmethod\n"
        "    def c(cls, x):\n        return cls.base + x\n"
        "    @staticmethod\n"
        "    def s(x):\n        return -x\n"
    )
    run_c = run_runner(tmp_path, source, "K.c", [_blob([1])], kind="classmethod")
    run_s = run_runner(tmp_path, source, "K.s", [_blob([1])], kind="staticmethod")
    assert run_c.outcome(0)["value"] == encode(11)
    assert run_s.outcome(0)["value"] == encode(-1)


def test_set_order_does_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    source = "def f(n):\n    return {'w%d' % i for i in range(n)}\n"
    runs = [
        run_runner(
            tmp_path,
            source,
            "f",
            [_blob([40])],
            flags=("-P", "-s", "-S"),  # -I would ignore PYTHONHASHSEED
            env={"PYTHONHASHSEED": seed},
        )
        for seed in ("1", "2")
    ]
    orders = printed_under_seeds("print(list({'w%d' % i for i in range(40)}))", ("1", "2"))
    assert orders[0] != orders[1]  # the seeds really change iteration order
    a, b = runs[0].outcome(0), runs[1].outcome(0)
    assert same_outcome(a, b)
    assert a["value"] == encode({f"w{i}" for i in range(40)})


def test_always_equal_object_does_not_pass_for_an_int(tmp_path: Path) -> None:
    source = (
        "class Yes:\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __hash__(self):\n        return 0\n"
        "def f(x):\n    return Yes()\n"
    )
    run = run_runner(tmp_path, source, "f", [_blob([1])])
    expected = {"status": "returned", "value": encode(2), "args": [encode(1)], "kwargs": {}}
    module = _exec_module(source)
    assert module["f"](1) == 2  # a naive in-process grader is fooled
    mismatch = compare_outcome(expected, run.outcome(0), SETTINGS)
    assert mismatch is not None and mismatch.kind == "value"


def _exec_module(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<candidate>", "exec"), namespace)
    return namespace


def test_int_subclass_is_not_an_int(tmp_path: Path) -> None:
    source = "class I(int):\n    pass\ndef f(x):\n    return I(x + 1)\n"
    run = run_runner(tmp_path, source, "f", [_blob([1])])
    got = run.outcome(0)
    assert got["value"]["t"] == "sub"
    expected = {"status": "returned", "value": encode(2), "args": [encode(1)], "kwargs": {}}
    assert _exec_module(source)["f"](1) == 2  # equal under ==
    assert compare_outcome(expected, got, SETTINGS) is not None


def test_lookalike_exceptions_never_match_the_builtin(tmp_path: Path) -> None:
    source = (
        "import builtins\n"
        "class ValueError(Exception):\n    pass\n"
        "class Disguised(Exception):\n    pass\n"
        "Disguised.__module__ = 'builtins'\n"
        "Disguised.__qualname__ = 'ValueError'\n"
        "builtins.ValueError = Disguised\n"  # patch the builtins too
        "def plain(x):\n    raise ValueError('bad')\n"
        "def disguised(x):\n    raise Disguised('bad')\n"
    )
    plain = run_runner(tmp_path, source, "plain", [_blob([1])]).outcome(0)
    disguised = run_runner(tmp_path, source, "disguised", [_blob([1])]).outcome(0)
    assert plain["exc"]["type"] == "cand.ValueError"
    assert disguised["exc"]["type"] == "<unverified>builtins.ValueError"
    expected = {
        "status": "raised",
        "exc": {"type": "builtins.ValueError", "msg": "bad"},
        "args": [encode(1)],
        "kwargs": {},
    }
    for got in (plain, disguised):
        mismatch = compare_outcome(expected, got, SETTINGS)
        assert mismatch is not None and mismatch.kind == "exception"


def test_patching_builtins_and_json_does_not_change_encoding(tmp_path: Path) -> None:
    source = (
        "import builtins, json, types\n"
        "builtins.type = lambda *a: int\n"
        "builtins.len = lambda x: 0\n"
        "builtins.isinstance = lambda *a: True\n"
        "json.dumps = lambda *a, **k: '{}'\n"
        "json.encoder.encode_basestring_ascii = lambda s: '\"forged\"'\n"
        "types.MemberDescriptorType = object\n"
        "def f(x):\n    return [x, 'text', (1.5,)]\n"
    )
    run = run_runner(tmp_path, source, "f", [_blob([3])])
    assert run.outcome(0)["value"] == encode([3, "text", (1.5,)])


def test_exit_at_call_keeps_earlier_results(tmp_path: Path) -> None:
    source = "import os\ndef f(x):\n    if x == 2:\n        os._exit(0)\n    return x\n"
    run = run_runner(tmp_path, source, "f", [_blob([0]), _blob([1]), _blob([2]), _blob([3])])
    assert run.returncode == 0  # the exit code proves nothing
    assert sorted(run.parsed.outcomes) == [0, 1]
    assert run.outcome(1)["value"] == encode(1)
    assert not run.parsed.done
    expected = {"status": "returned", "value": encode(3), "args": [encode(3)], "kwargs": {}}
    mismatch = compare_outcome(expected, run.parsed.outcomes.get(3), SETTINGS)
    assert mismatch is not None and mismatch.kind == "missing"


def test_system_exit_is_an_exception_outcome(tmp_path: Path) -> None:
    source = "import sys\ndef f(x):\n    sys.exit(0)\n"
    run = run_runner(tmp_path, source, "f", [_blob([0]), _blob([1])])
    assert run.outcome(0)["exc"]["type"] == "builtins.SystemExit"
    assert run.outcome(1)["status"] == "raised" and run.parsed.done


def test_fake_frames_on_stdout_are_ignored(tmp_path: Path) -> None:
    nonce = secrets.token_hex(8)
    forged = {"event": "result", "i": 0, "outcome": {"status": "returned", "value": encode(99)}}
    source = (
        "import json, sys\n"
        f"print({nonce!r} + ' ' + json.dumps({forged!r}), flush=True)\n"
        "def f(x):\n"
        f"    print({nonce!r} + ' ' + json.dumps({forged!r}), flush=True)\n"
        "    return x\n"
    )
    run = run_runner(tmp_path, source, "f", [_blob([1])], nonce=nonce)
    assert nonce.encode() in run.stdout  # the forgery was printed...
    assert run.outcome(0)["value"] == encode(1)  # ...and nobody listened
    assert run.parsed.rejected_frames == 0


def test_frames_without_the_nonce_on_the_channel_are_rejected(tmp_path: Path) -> None:
    forged = {"event": "result", "i": 0, "outcome": {"status": "returned", "value": encode(99)}}
    line = json.dumps(forged)
    source = (
        "import os\n"
        "def f(x):\n"
        "    for fd in range(3, 64):\n"
        "        try:\n"
        f"            os.write(fd, b'guess ' + {line.encode()!r} + b'\\n')\n"
        f"            os.write(fd, {line.encode()!r} + b'\\n')\n"
        "        except OSError:\n"
        "            pass\n"
        "    return x\n"
    )
    run = run_runner(tmp_path, source, "f", [_blob([1])])
    assert run.parsed.rejected_frames >= 2
    assert run.outcome(0)["value"] == encode(1)


def test_load_error_does_not_stop_the_run(tmp_path: Path) -> None:
    garbage = base64.b64encode(b"not a pickle").decode()
    run = run_runner(tmp_path, "def f(x):\n    return x * 2\n", "f", [garbage, _blob([4])])
    assert run.outcome(0)["status"] == "load_error"
    assert run.outcome(0)["msg"].startswith("_pickle.UnpicklingError") or run.outcome(0)["msg"]
    assert run.outcome(1)["value"] == encode(8)
    expected = {"status": "returned", "value": encode(8), "args": [encode(4)], "kwargs": {}}
    mismatch = compare_outcome(expected, run.outcome(0), SETTINGS)
    assert mismatch is not None and mismatch.kind == "load_error"


def test_timeout_on_infinite_loop_then_next_input_runs(tmp_path: Path) -> None:
    source = (
        "def f(x):\n"
        "    if x == 0:\n"
        "        while True:\n"
        "            pass\n"
        "    if x == 1:\n"
        "        try:\n"
        "            while True:\n"
        "                pass\n"
        "        except BaseException:\n"  # swallowing the alarm does not help
        "            return 42\n"
        "    return x\n"
    )
    run = run_runner(tmp_path, source, "f", [_blob([0]), _blob([1]), _blob([2])], timeout=0.2)
    assert run.outcome(0)["status"] == "timeout"
    assert run.outcome(1)["status"] == "timeout"
    assert run.outcome(2)["value"] == encode(2)
    assert 0.15 < run.outcome(0)["t"] < 2.0


def test_generator_result_consumed_with_bound(tmp_path: Path) -> None:
    source = "import itertools\ndef f(x):\n    return (i * x for i in itertools.count())\n"
    run = run_runner(tmp_path, source, "f", [_blob([2])], max_items=4)
    value = run.outcome(0)["value"]
    assert value == {"t": "iter", "v": [encode(i * 2) for i in range(4)], "truncated": True}


def test_import_errors_are_reported(tmp_path: Path) -> None:
    broken = run_runner(tmp_path, "raise RuntimeError('no')\n", "f", [_blob([1])])
    assert not broken.parsed.ready
    assert broken.parsed.import_error == "builtins.RuntimeError: no"
    missing = run_runner(tmp_path, "def g():\n    pass\n", "f", [_blob([1])], module="other")
    assert missing.parsed.import_error is not None
    assert missing.parsed.import_error.startswith("builtins.AttributeError")
    exits = run_runner(tmp_path, "import sys\nsys.exit(0)\n", "f", [_blob([1])], module="ex")
    assert exits.parsed.import_error == "builtins.SystemExit: 0"
    assert exits.parsed.outcomes == {}


def test_floats_keep_sign_and_nan(tmp_path: Path) -> None:
    source = "def f(x):\n    return [-0.0, float('nan'), float('inf'), x / 3]\n"
    run = run_runner(tmp_path, source, "f", [_blob([1.0])])
    values = run.outcome(0)["value"]["v"]
    assert [v["v"] for v in values[:3]] == ["-0x0.0p+0", "nan", "inf"]
    assert float.fromhex(values[3]["v"]) == 1.0 / 3
    assert not math.isnan(float.fromhex(values[3]["v"]))


def test_forked_child_never_reports(tmp_path: Path) -> None:
    source = (
        "import os, time\n"
        "def f(x):\n"
        "    if os.fork() == 0:\n"
        "        return 'child'\n"  # the child returns into the runner's loop
        "    time.sleep(0.2)\n"
        "    return 'parent'\n"
    )
    run = run_runner(tmp_path, source, "f", [_blob([1]), _blob([2])])
    assert [run.outcome(i)["value"] for i in (0, 1)] == [encode("parent")] * 2
    assert run.parsed.rejected_frames == 0 and run.parsed.done


def test_arguments_before_the_call_on_request(tmp_path: Path) -> None:
    source = "def f(xs):\n    xs.clear()\n    return 1\n"
    run = run_runner(tmp_path, source, "f", [_blob([[1, 2]])], encode_inputs=True)
    outcome = run.outcome(0)
    assert outcome["args_in"] == [encode([1, 2])] and outcome["kwargs_in"] == {}
    assert outcome["args"] == [encode([])]
    plain = run_runner(tmp_path, source, "f", [_blob([[1, 2]])]).outcome(0)
    assert "args_in" not in plain


def test_showing_an_iterator_argument_does_not_consume_it(tmp_path: Path) -> None:
    # Encoding the arguments before the call consumes an iterator; the call must still see it all.
    source = "def f(it):\n    return sum(it)\n"
    run = run_runner(tmp_path, source, "f", [_blob([iter([1, 2, 3])])], encode_inputs=True)
    outcome = run.outcome(0)
    assert outcome["value"] == encode(6)
    assert outcome["args_in"][0]["v"] == [encode(1), encode(2), encode(3)]


def test_shared_structure_does_not_explode() -> None:
    # A doubly linked ring has exponentially many paths; encoding must stay quick and bounded.
    import time

    from replicate.jail.runner.encoding import encode

    nodes: list[list[object]] = [[None, None, i] for i in range(200)]
    for i, node in enumerate(nodes):
        node[0] = nodes[i - 1]
        node[1] = nodes[(i + 1) % len(nodes)]
    started = time.perf_counter()
    tagged = encode({"root": nodes[0], "all": nodes})
    assert time.perf_counter() - started < 2.0
    assert tagged == {"t": "toolarge"}


RANDOM_SOURCE = """
import random

def draw(n):
    return [random.random() for _ in range(n)]
"""


def test_the_global_random_generator_is_reseeded_before_each_call(tmp_path: Path) -> None:
    """A reference that draws from `random` passes golden runs by chance unless reseeded."""
    outside = [
        subprocess.run(
            [sys.executable, "-I", "-c", "import random; print(random.random())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for _ in range(2)
    ]
    assert outside[0] != outside[1]  # positive control: unseeded processes differ
    runs = [run_runner(tmp_path, RANDOM_SOURCE, "draw", [_blob([3]), _blob([3])]) for _ in range(2)]
    values = [run.outcome(i)["value"] for run in runs for i in (0, 1)]
    assert all(v == values[0] for v in values), values  # across calls and processes


def test_the_pure_python_writer_matches_the_c_encoder() -> None:
    # The runner writes frames with json's C encoder and keeps `_write` for interpreters built
    # without `_json` (a repo's environment may bring any CPython); both must give the same text.
    assert channel._C_ENCODE is not None
    values = [
        1,
        -0.0,
        float("nan"),
        'é\u2028\x00"',
        b"\xff",
        {3, 1},
        {"k": [1, (2, None)], "deep": [[[True]]]},
        ValueError("boom"),
        collections.OrderedDict(a=1),
        decimal.Decimal("1.5"),
    ]
    for value in values:
        frame = {"event": "result", "i": 7, "outcome": {"status": "ok", "value": encode(value)}}
        written: list[str] = []
        channel._write(frame, written)
        assert "".join(written) == channel._dumps(frame)
        assert json.loads(channel._dumps(frame)) == json.loads(json.dumps(frame))


def test_one_alarm_region_times_each_load_on_its_own() -> None:
    # The loads share one region (the signal mask is set twice, not twice per input); each
    # still gets its own limit, and nothing fires once the region is left.
    import signal
    import time

    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    previous = signal.getsignal(signal.SIGALRM)
    try:
        with calling._AlarmRegion():
            slow = calling._armed(lambda: time.sleep(0.5) or {"status": "loaded"}, 0.1)
            quick = calling._armed(lambda: {"status": "loaded"}, 0.1)
            late = calling._armed(lambda: time.sleep(0.15) or {"status": "loaded"}, 0.1)
        time.sleep(0.3)  # the timer fires meanwhile: blocked, pending, nothing raised here
        with calling._AlarmRegion():  # and delivered here, disarmed: dropped
            again = calling._armed(lambda: {"status": "loaded"}, 0.1)
        assert again["status"] == "loaded"
        assert slow["status"] == "timeout" and slow["t"] < 0.4
        assert quick["status"] == "loaded" and late["status"] == "timeout"
        assert signal.SIGALRM in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0, 0)  # the runner leaves its timer running
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------- locks

LOCKED_STORE = """
import threading


class Store:
    def __init__(self, size, *, tag="t"):
        self._lock = threading.RLock()
        self._guard = threading.Lock()
        self.size = size
        self.tag = tag
        self.data = {}

    def put(self, k, v):
        with self._lock:
            self.data[k] = v
            return len(self.data)
"""


def test_locks_encode_by_whether_held_and_exact_type() -> None:
    import _thread

    class MyRLock(_thread.RLock):  # type: ignore[misc]
        pass

    lock, rlock = threading.Lock(), threading.RLock()
    assert (encode(lock), encode(rlock)) == ({"t": "lock", "held": False}, encode(_thread.RLock()))
    lock.acquire()
    rlock.acquire()
    assert (encode(lock), encode(rlock)) == (
        {"t": "lock", "held": True},
        {"t": "rlock", "held": True},
    )
    assert encode(MyRLock())["t"] == "opaque"  # exact types only


def test_a_rebuilt_self_holding_locks_is_comparable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replicate.harvest.rebuild import _Rebuild

    mod = _load(tmp_path, monkeypatch, "locked_store", LOCKED_STORE)
    # what the harvest plugin records for a self that does not pickle: its class call
    inputs = [_blob([_Rebuild(mod.Store, (3,), {"tag": "x"}), "k", 1])]
    with pytest.raises(TypeError, match="RLock"):
        pickle.dumps(mod.Store(3))
    expected = run_runner(tmp_path, LOCKED_STORE, "Store.put", inputs, module="locked_store")
    outcome = expected.outcome(0)
    assert outcome["status"] == "returned" and outcome["value"] == encode(1)
    fields = outcome["args"][0]["fields"]
    assert fields["_lock"] == {"t": "rlock", "held": False}
    assert fields["_guard"] == {"t": "lock", "held": False}
    assert fields["tag"] == encode("x") and fields["size"] == encode(3)
    assert compare_outcome(outcome, outcome, SETTINGS) is None  # gradable: no opaque part
    leaky = LOCKED_STORE.replace("        with self._lock:\n", "        self._lock.acquire()\n")
    leaky = leaky.replace(
        "            self.data[k] = v\n            return",
        "        self.data[k] = v\n        return",
    )
    got = run_runner(tmp_path, leaky, "Store.put", inputs, module="locked_store").outcome(0)
    mismatch = compare_outcome(outcome, got, SETTINGS)
    assert mismatch is not None
    assert (mismatch.kind, mismatch.path, mismatch.got) == (
        "args-after-call",
        "args[0]._lock",
        "<locked _thread.RLock>",
    )


def test_a_local_class_sentinel_and_a_class_lambda_are_named_by_identity() -> None:
    # boltons' `_MISSING = make_sentinel(...)` (an instance of a class local to a function) and
    # `key = staticmethod(lambda ...)`: their own names do not resolve, so they never matched,
    # and every method of an object holding one was dropped. The module's own object gets the
    # name that holds it; another instance of that class, or another lambda, does not.
    import sys
    import types

    module = types.ModuleType("sentinels_mod")

    def make_sentinel() -> object:
        class Sentinel:
            pass

        Sentinel.__module__ = "sentinels_mod"
        return Sentinel()

    class Queue:
        key = staticmethod(lambda p: -p)

    Queue.__module__ = Queue.key.__module__ = "sentinels_mod"  # as if defined there
    module.__dict__.update(_MISSING=make_sentinel(), Queue=Queue)
    sys.modules["sentinels_mod"] = module
    try:
        missing = module.__dict__["_MISSING"]
        assert encode(missing) == {"t": "ref", "v": "sentinels_mod._MISSING"}
        assert encode([missing, missing]) == {"t": "list", "v": [encode(missing)] * 2}
        lookalike = type(missing)()  # same local class, not the module's object: by state
        assert encode(lookalike)["type"] == f"<by state>sentinels_mod.{type(missing).__qualname__}"
        assert encode(Queue.key) == {"t": "ref", "v": "sentinels_mod.Queue.key"}
        assert encode(lambda p: -p)["v"].startswith("<unverified>")
        returned = {"status": "returned", "value": encode(missing), "args": [], "kwargs": {}}
        forged = {**returned, "value": encode(lookalike)}
        settings = GradingSettings()
        assert compare_outcome(returned, returned, settings) is None
        assert compare_outcome(returned, forged, settings) is not None
    finally:
        del sys.modules["sentinels_mod"]


def test_an_object_of_a_class_made_by_a_function_compares_by_state() -> None:
    """Grader 8: a class whose name does not verify and that has no `__eq__` is named by the
    name it claims, `<by state>`; its objects match on equal fields only, and one with an
    `__eq__` of its own its fields do not decide (by identity) keeps `<unverified>` (a match
    for nothing; grader 9: one its fields decide is by state, `tests/unit/jail/
    test_own_equality.py`)."""

    def make(eq: bool) -> type:
        class Tally:
            def __init__(self, counts: dict[str, int]) -> None:
                self.counts = counts

        if eq:
            Tally.__eq__ = lambda self, other: self is other  # type: ignore[assignment, method-assign]
        return Tally

    plain, again, with_eq = make(False), make(False), make(True)
    expected = encode(plain({"a": 1}))
    assert expected["type"] == f"<by state>{plain.__module__}.{plain.__qualname__}"
    settings = GradingSettings()
    returned = {"status": "returned", "value": expected, "args": [], "kwargs": {}}
    alike = {**returned, "value": encode(again({"a": 1}))}  # another class claiming that name
    assert compare_outcome(returned, alike, settings) is None
    other = {**returned, "value": encode(again({"a": 2}))}
    assert compare_outcome(returned, other, settings) is not None
    assert encode(with_eq({"a": 1}))["type"].startswith("<unverified>")


def test_an_input_that_fails_to_load_keeps_the_outcome_before_it(tmp_path: Path) -> None:
    """A load error after a returned input: both outcomes reach the host (the result of the
    first waited to be written with the next call, and was lost when none came)."""
    missing = base64.b64encode(pickle.dumps(((collections.OrderedDict(),), {}))).decode()
    missing = base64.b64encode(
        base64.b64decode(missing).replace(b"collections", b"nosuchmodul")
    ).decode()
    done = run_runner(tmp_path, "def f(*a):\n    return len(a)\n", "f", [_blob([1]), missing])
    assert done.outcome(0)["value"] == {"t": "int", "v": "1"}
    assert done.outcome(1)["status"] == "load_error"
