"""Harvest helpers: which paths pytest gets, and parsing the plugin's output file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from replicate.harvest import collect as harvest
from replicate.harvest.detail import harvest_detail
from tests.integration.minted import write_files


def test_src_layout(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/mod.py": "",
            "src/single.py": "",
            "src/setup.py": "",
            "src/conftest.py": "",
            "src/testutils.py": "",
            "src/.hidden/__init__.py": "",
            "src/notapkg/data.txt": "",
            "src/pkg/tests/test_x.py": "",
            "tests/test_a.py": "",
            "testing/helpers.py": "",
        },
    )
    assert harvest.test_paths(tmp_path, ("src",)) == [
        "tests",
        "testing",
        "src/pkg",
        "src/single.py",
    ]


def test_flat_layout_lists_each_path_once(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "tests/__init__.py": "",
            "tests/test_a.py": "",
            "test/test_b.py": "",
            "setup.py": "",
            "conftest.py": "",
            "tool.py": "",
            "docs/conf.py": "",
        },
    )
    assert harvest.test_paths(tmp_path, (".",)) == ["tests", "test", "pkg", "tool.py"]


def test_tests_inside_a_source_root(tmp_path: Path) -> None:
    write_files(tmp_path, {"lib/pkg/__init__.py": "", "lib/tests/test_x.py": ""})
    assert harvest.test_paths(tmp_path, ("lib",)) == ["lib/tests", "lib/pkg"]


def test_missing_source_root(tmp_path: Path) -> None:
    assert harvest.test_paths(tmp_path, ("src",)) == []


def _lines(*records: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def test_parse_every_record_kind(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    out = tmp_path / "harvest.jsonl"
    out.write_text(
        _lines(
            {"rec": "wrap", "key": "m.f", "ok": True, "reason": ""},
            {"rec": "wrap", "key": "m.g", "ok": False, "reason": "module does not import: X"},
            {"rec": "call", "key": "m.f", "pickle_b64": "AAA=", "origin": "tests/t.py::a"},
            {"rec": "call", "key": "m.f", "pickle_b64": "BBB="},
            {"rec": "drop", "key": "m.f", "reason": "argument too large", "count": 2},
            {"rec": "drop", "key": "m.f", "reason": "argument too large", "count": 3},
            {"rec": "drop", "key": "m.f", "reason": "unpicklable argument: X", "count": 1},
            {
                "rec": "paths",
                "sys_path": [
                    str(work / "tests"),
                    "/usr/lib/python3.11",
                    str(work),
                    str(work / "tests"),
                ],
            },
        )
    )
    parsed = harvest._parse(out, work)
    assert parsed.configured
    assert [(c.pickle_b64, c.origin, c.visible) for c in parsed.calls["m.f"]] == [
        ("AAA=", "tests/t.py::a", True),
        ("BBB=", "", True),  # no flag (an older plugin): visible, as before
    ]
    assert dict(parsed.drops["m.f"]) == {"argument too large": 5, "unpicklable argument: X": 1}
    assert parsed.not_wrapped == {"m.g": "module does not import: X"}
    assert parsed.extra_paths == ("tests", ".")


def test_parse_missing_file_means_not_configured(tmp_path: Path) -> None:
    parsed = harvest._parse(tmp_path / "none.jsonl", tmp_path)
    assert not parsed.configured and not parsed.calls and parsed.extra_paths == ()


def test_parse_skips_cut_and_foreign_lines(tmp_path: Path) -> None:
    out = tmp_path / "harvest.jsonl"
    good = {"rec": "call", "key": "m.f", "pickle_b64": "AAA=", "origin": "o"}
    out.write_bytes(
        _lines(
            good,
            "[1, 2]",
            "42",
            {"rec": "call", "key": "m.f"},
            {"rec": "drop", "key": "m.f", "reason": "r", "count": "many"},
            {"rec": "wrap", "key": ["not", "hashable"], "ok": False, "reason": "r"},
        ).encode()
        + b'{"rec": "call", "key": "m.f", "pickle_b64": "\xe2\x82'
    )
    parsed = harvest._parse(out, tmp_path)
    assert parsed.configured
    assert [c.pickle_b64 for c in parsed.calls["m.f"]] == ["AAA="]
    assert parsed.not_wrapped == {}


def test_parse_carries_the_rebuilt_flag_and_notes_it(tmp_path: Path) -> None:
    out = tmp_path / "harvest.jsonl"
    out.write_text(
        _lines(
            {"rec": "call", "key": "m.C.f", "pickle_b64": "AAA=", "rebuilt": True},
            {"rec": "call", "key": "m.C.f", "pickle_b64": "BBB=", "rebuilt": False},
            {"rec": "call", "key": "m.C.g", "pickle_b64": "CCC=", "rebuilt": "yes"},
            {"rec": "call", "key": "m.h", "pickle_b64": "DDD="},
        )
    )
    parsed = harvest._parse(out, tmp_path)
    flags = {k: [c.rebuilt for c in calls] for k, calls in parsed.calls.items()}
    assert flags == {"m.C.f": [True, False], "m.C.g": [False], "m.h": [False]}
    assert harvest._rebuilt_note(parsed.calls) == (
        "1 traced calls of 1 methods rebuild `self` from the class call that built it"
        " (it did not pickle)",
    )
    assert harvest._rebuilt_note({"m.h": parsed.calls["m.h"]}) == ()


def test_parse_stats_and_drop_details(tmp_path: Path) -> None:
    out = tmp_path / "harvest.jsonl"
    stats = {"rec": "stats", "key": "m.f", "calls": 9, "distinct": 2, "recorded": 0, "dropped": 9}
    out.write_text(
        _lines(
            {
                "rec": "drop",
                "key": "m.f",
                "reason": "argument does not pickle: lambda",
                "count": 9,
                "detail": "PicklingError: Can't pickle <lambda>",
            },
            {
                **stats,
                "spent_in": "",
                "tests": 2,
                "busiest": "t.py::a",
                "busiest_calls": 8,
                "stopped": {"repeats": 1},
            },
            {"rec": "stats", "key": "m.g", "calls": "many"},
            {"rec": "stats", "key": "m.h", "calls": 1, "stopped": [1]},
        )
    )
    parsed = harvest._parse(out, tmp_path)
    assert parsed.stats == {
        "m.f": harvest.TargetStats(9, 2, 0, 9, "", 2, "t.py::a", 8, {"repeats": 1})
    }
    assert harvest_detail(parsed, "m.f") == (
        "called 9 times in 2 tests with 2 distinct arguments seen (8 in test t.py::a);"
        " traced 0 (tests no longer looked at: 1 after 1000 repeats);"
        " 9 dropped, 9 as argument does not pickle: lambda (PicklingError: Can't pickle <lambda>)"
    )
    assert harvest_detail(parsed, "m.other") == "not called by the tests"


def test_benchmark_options_only_where_the_plugin_is_installed(tmp_path: Path) -> None:
    assert harvest.benchmark_options(tmp_path) == ()
    (tmp_path / "pytest_benchmark").mkdir()
    assert harvest.benchmark_options(tmp_path) == ("--benchmark-disable",)


def test_install_plugin_ships_every_module_it_imports(tmp_path: Path) -> None:
    harvest.install_plugin(tmp_path)
    shipped = {p.name for p in tmp_path.iterdir()}
    plugin = (tmp_path / "replicate_harvest.py").read_text()
    imported = set(re.findall(r"from (replicate_\w+) import", plugin))
    assert imported and {f"{name}.py" for name in imported} <= shipped
