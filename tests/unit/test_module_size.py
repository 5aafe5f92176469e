"""The house's size rule, checked: no module of the package past `LIMIT` lines (ARCHITECTURE.md:
~400, none past 450).  The in-jail runner grew to ~2,000 lines in one file before this check
existed."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "replicate"
LIMIT = 450


def too_long(root: Path, limit: int = LIMIT) -> dict[str, int]:
    """Modules under `root` longer than `limit` lines, with their lengths."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > limit:
            found[str(path.relative_to(root))] = lines
    return found


def test_the_check_flags_a_long_module(tmp_path: Path) -> None:
    (tmp_path / "short.py").write_text("x = 1\n" * LIMIT)
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    assert too_long(tmp_path) == {"inner/long.py": LIMIT + 1}


def test_no_module_of_the_package_is_too_long() -> None:
    assert too_long(PACKAGE) == {}
