"""The separating search's choices: as many inputs for every degenerate program at the floor,
and no renaming of a string the library spells."""

from __future__ import annotations

from pathlib import Path

from replicate.gen.separate import balanced
from replicate.gen.survivors import pick_killers
from replicate.languages import get_language

# Inputs 0-59 are ones five programs get wrong (they raise where the reference returns False);
# inputs 100-159 only the sixth (`return False` where the reference returns True).
FALSE = frozenset(range(60))
TRUE = frozenset(range(100, 160))
DIFFERING = [FALSE, FALSE, FALSE, FALSE, FALSE, TRUE]
ORDER = [*range(60), *range(100, 160)]


def test_the_greedy_choice_starves_the_program_only_one_kind_of_input_tells_apart() -> None:
    # The control: most programs killed per input first spends the whole limit on FALSE.
    chosen = pick_killers(DIFFERING, ORDER, per_survivor=60, limit=60)
    assert not set(chosen) & TRUE


def test_every_program_gets_about_as_many_wrong() -> None:
    chosen = balanced(DIFFERING, ORDER, limit=60)
    assert len(chosen) == len(set(chosen)) == 60
    assert len(set(chosen) & FALSE) == 30 and len(set(chosen) & TRUE) == 30
    assert chosen[:4] == [0, 100, 1, 101]  # in generation order


def test_an_input_most_programs_get_wrong_comes_first_and_the_limit_holds() -> None:
    differing = [frozenset({1, 2}), frozenset({2, 3}), frozenset(), frozenset({4})]
    assert balanced(differing, [1, 2, 3, 4], limit=2) == [2, 4]
    assert balanced(differing, [1, 2, 3, 4], limit=10) == [2, 4, 1, 3]
    assert balanced([frozenset()], [1], limit=5) == []
    # one program at the floor, wrong on every input: no choice moves it, and none fails
    assert balanced([frozenset({1, 2})], [2, 1], limit=1) == [2]


def test_an_input_that_lifts_a_program_under_the_floor_comes_last() -> None:
    # A clamp: `return high` (at the floor) is wrong on inputs 1-4; `return low`, under it but
    # close, is right on 1 and 2 (values below the range) and wrong on 3 and 4.
    high, low = frozenset({1, 2, 3, 4}), frozenset({3, 4})
    assert balanced([high], [1, 2, 3, 4], limit=2) == [1, 2]  # blind to `return low`
    assert balanced([high], [1, 2, 3, 4], limit=2, others=[low], levels=[10, 9]) == [3, 4]


def test_the_library_spells_its_own_keys_and_its_tests_do_not_count(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "opts.py").write_text("OPTS = {'hookwrapper': False}\nKEY = \"first\"\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "helpers.py").write_text("NAME = 'hello'\n")
    (tmp_path / "pkg" / "test_opts.py").write_text("NAME = 'world'\n")
    spelled = get_language("python").literals(tmp_path)
    assert {"hookwrapper", "first"} <= spelled
    assert not {"hello", "world"} & spelled
