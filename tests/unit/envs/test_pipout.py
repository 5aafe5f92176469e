"""Reading pip's error output."""

from __future__ import annotations

from replicate.envs.pipout import culprits, error_line

STDERR = """\
WARNING: Location 'file:///opt/x/' is ignored
ERROR: Could not find a version that satisfies the requirement Zzz_Missing>=1 (from versions: none)
ERROR: No matching distribution found for Zzz_Missing>=1
"""


def test_error_line_takes_first_error() -> None:
    assert error_line(STDERR) == (
        "Could not find a version that satisfies the requirement Zzz_Missing>=1"
        " (from versions: none)"
    )
    assert error_line("") == "pip failed without a message"
    assert error_line("a\nlast line\n") == "last line"
    assert len(error_line("ERROR: " + "x" * 1000)) == 300


def test_culprits_match_by_name() -> None:
    assert culprits(STDERR, ["six", "zzz-missing", "zzz.missing[extra]>=2"]) == [
        "zzz-missing",
        "zzz.missing[extra]>=2",
    ]
    assert culprits("ERROR: ResolutionImpossible", ["six"]) == []
