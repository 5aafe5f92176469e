"""The recorder's size-capped pickling: the bytes `pickle.dumps` gives, or None past the cap,
found without pickling the whole object."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from replicate.harvest.rebuild import dumps_capped

CAP = 65_536
_reduced = 0


class Counted:
    """Counts how many of its kind were pickled."""

    def __init__(self, payload: str) -> None:
        self.payload = payload

    def __reduce__(self) -> tuple[Any, ...]:
        global _reduced
        _reduced += 1
        return (Counted, (self.payload,))


def _reductions(dump: Any, obj: object) -> int:
    global _reduced
    _reduced = 0
    dump(obj)
    return _reduced


@pytest.mark.parametrize(
    "obj",
    [
        1,
        ("x" * 70_000,),
        [str(n) for n in range(20_000)],  # several frames
        {"a": [1, 2.5, None] * 5_000, "b": b"\0" * 30_000},
    ],
)
def test_the_bytes_are_pickles_own_with_room_to_spare(obj: object) -> None:
    assert dumps_capped(obj, 10**9) == pickle.dumps(obj, protocol=4)


def test_over_the_cap_gives_none_and_at_it_the_pickle() -> None:
    data = pickle.dumps(list(range(30_000)), protocol=4)
    assert dumps_capped(list(range(30_000)), len(data)) == data
    assert dumps_capped(list(range(30_000)), len(data) - 1) is None
    assert dumps_capped([list(range(1000)) for _ in range(100)], CAP) is None


def test_a_large_object_is_left_at_the_first_frames_past_the_cap() -> None:
    many = [Counted(f"{n:0100d}") for n in range(10_000)]  # ~1.1 MB pickled
    assert _reductions(lambda o: pickle.dumps(o, protocol=4), many) == 10_000  # the control
    assert _reductions(lambda o: dumps_capped(o, CAP), many) < 2_000


def test_what_does_not_pickle_raises_as_in_pickle() -> None:
    local = (lambda: 1,)
    with pytest.raises(Exception) as plain:
        pickle.dumps(local, protocol=4)
    with pytest.raises(plain.type):
        dumps_capped(local, CAP)


def test_a_match_pickles_as_its_pattern_matched_again() -> None:
    """`re.Match` does not pickle (the control); the harvest's pickle of one loads, with the
    standard library only, as the same match: its span and every group."""
    import re

    match = re.compile(r"(?<=a)(\d+)-(?P<x>\w)").search("zza12-b;a3-c", 4)
    assert match is not None
    with pytest.raises(TypeError):
        pickle.dumps(match, protocol=4)
    data = dumps_capped(((match,), {"m": match}), 10**6)
    assert data is not None and b"replicate" not in data
    (again,), kwargs = pickle.loads(data)[0], pickle.loads(data)[1]
    assert again.regs == match.regs and again.groupdict() == {"x": "c"}
    assert kwargs["m"].span() == match.span()


def test_a_match_that_would_not_come_back_alike_still_refuses() -> None:
    import re

    match = re.compile(r"a|ab").fullmatch("ab")  # matching at its start gives "a", not "ab"
    assert match is not None
    with pytest.raises(pickle.PicklingError):
        dumps_capped(match, 10**6)


class Ranker:
    def __init__(self, bonus: int) -> None:
        self.bonus = bonus

    def __key(self, word: str) -> int:
        return len(word) + self.bonus

    def key(self) -> Any:
        return self.__key


def test_a_private_bound_method_pickles_by_the_attribute_that_gives_it_back() -> None:
    """pickle writes a bound method as `getattr(self, __name__)`: a private method's name is
    not its attribute (`_Ranker__key`), and the pickle does not load (the control)."""
    method = Ranker(2).key()
    with pytest.raises(AttributeError):
        pickle.loads(pickle.dumps(method, protocol=4))
    data = dumps_capped(method, CAP)
    assert data is not None
    again = pickle.loads(data)
    assert again("abc") == 5 and again.__func__ is method.__func__
