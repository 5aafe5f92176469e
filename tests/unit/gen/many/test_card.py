from __future__ import annotations

from pathlib import Path

from replicate.gen.many.card import build_card, render_markdown
from replicate.gen.many.ledger import RepoOutcome
from replicate.gen.many.licence import find_licence


def test_totals_and_markdown() -> None:
    outcomes = [
        RepoOutcome(
            source="pypi:a==1",
            status="minted",
            key="a-1",
            commit="c" * 40,
            tasks=("t1", "t2"),
            extracted=10,
            validated=2,
            kill_rates=(0.2, 0.9, 0.8),
            setup_notes=("pytest exited with code 5",),
            licence="MIT",
        ),
        RepoOutcome(source="./b", status="failed", stage="budget", reason="out of time after 5 s"),
        RepoOutcome(source="pypi:c==1", status="minted", extracted=2, licence=None),
    ]
    card = build_card(outcomes)
    t = card.totals
    assert (t.repositories, t.minted, t.failed, t.tasks) == (3, 2, 1, 2)
    assert (t.extracted, t.validated, t.yield_rate, t.kill_rate_median) == (12, 2, 0.1667, 0.8)
    assert t.licences == (("MIT", 1), ("not stated", 1))
    assert card.repositories[1].yield_rate is None
    text = render_markdown(card)
    assert "| pypi:a==1 | a-1 | cccccccccccc | 2 | 20% | 0.80 | MIT | minted |" in text
    assert "failed (budget: out of time after 5 s)" in text
    assert "- pypi:a==1: pytest exited with code 5" in text


def test_licence_from_pkg_info_pyproject_or_file(tmp_path: Path) -> None:
    one, two, three, four = (tmp_path / n for n in ("one", "two", "three", "four"))
    for folder in (one, two, three, four):
        folder.mkdir()
    (one / "PKG-INFO").write_text(
        "Metadata-Version: 2.1\nName: x\nLicense: UNKNOWN\n"
        "Classifier: License :: OSI Approved :: BSD License\n"
    )
    (two / "pyproject.toml").write_text('[project]\nname = "x"\nlicense = {text = "Apache-2.0"}\n')
    (three / "LICENSE").write_text("\n  The MIT License (MIT)\n\nCopyright ...\n")
    assert find_licence(one) == "BSD License"
    assert find_licence(two) == "Apache-2.0"
    assert find_licence(three) == "The MIT License (MIT)"
    assert find_licence(four) is None


def test_tasks_per_difficulty_band() -> None:
    outcomes = [
        RepoOutcome(source="pypi:a==1", status="minted", key="a-1", tasks=("t1", "t2", "t3")),
        RepoOutcome(source="pypi:b==1", status="minted", key="b-1", tasks=("t4",)),
        RepoOutcome(source="./c", status="failed", stage="gen", reason="no functions"),
    ]
    bands = {"t1": "easy", "t2": "hard", "t3": "hard", "t4": "medium"}
    card = build_card(outcomes, bands)  # type: ignore[arg-type]
    assert card.repositories[0].bands == (("easy", 1), ("medium", 0), ("hard", 2))
    assert card.repositories[1].bands == (("easy", 0), ("medium", 1), ("hard", 0))
    assert card.repositories[2].bands == ()
    assert card.totals.bands == (("easy", 1), ("medium", 1), ("hard", 2))
    text = render_markdown(card)
    assert "## Difficulty" in text and "| all | 1 | 1 | 2 |" in text
    assert "| pypi:a==1 | 1 | 0 | 2 |" in text
    assert "## Difficulty" not in render_markdown(build_card(outcomes))  # none measured


def test_the_main_drop_reasons_are_counted_by_member() -> None:
    most = "fewer than 3 deterministic inputs (most dropped: nondeterministic outcome)"
    other = "fewer than 3 deterministic inputs (most dropped: reference hangs)"
    outcomes = [
        RepoOutcome(source="a", status="minted", drops=((most, 4), ("not called by the tests", 3))),
        RepoOutcome(source="b", status="minted", drops=((other, 2), ("an older reason", 1))),
    ]
    card = build_card(outcomes)
    assert card.totals.drops == (
        ("fewer than 3 deterministic inputs", 6),
        ("not called by the tests", 3),
        ("(a reason this version does not know)", 1),
    )
    assert card.repositories[1].drops[0] == ("fewer than 3 deterministic inputs", 2)
    text = render_markdown(card)
    assert "## Why targets dropped (main reasons)" in text
    assert "- fewer than 3 deterministic inputs: 6" in text
