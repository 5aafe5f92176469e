import operator

import pytest

from samplelib import iterables


def descending(a, b):
    return b < a


def differ_in_parity(a, b):
    return (a - b) % 2 == 1


def first_char(word):
    return word[:1]


@pytest.mark.parametrize(
    ("items", "size", "expected"),
    [
        (range(7), 3, [[0, 1, 2], [3, 4, 5], [6]]),
        (range(6), 3, [[0, 1, 2], [3, 4, 5]]),
        ([], 4, []),
        ("abcde", 1, [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ("abcde", 10, [["a", "b", "c", "d", "e"]]),
        ([None, None, None], 2, [[None, None], [None]]),
        ((x * x for x in range(5)), 2, [[0, 1], [4, 9], [16]]),
        ([1.5, -2.0], 2, [[1.5, -2.0]]),
    ],
)
def test_chunked(items, size, expected):
    assert list(iterables.chunked(items, size)) == expected


@pytest.mark.parametrize("size", [0, -3])
def test_chunked_rejects_bad_size(size):
    with pytest.raises(ValueError):
        list(iterables.chunked([1, 2, 3], size))


def test_chunked_is_lazy():
    source = iter(range(10))
    gen = iterables.chunked(source, 2)
    assert next(gen) == [0, 1]
    assert next(gen) == [2, 3]
    assert next(source) == 4


@pytest.mark.parametrize(
    ("items", "n", "expected"),
    [
        ("abcd", 2, [("a", "b"), ("b", "c"), ("c", "d")]),
        ([1, 2, 3], 3, [(1, 2, 3)]),
        ([1, 2], 3, []),
        ([], 1, []),
        ([1, 2, 3], 1, [(1,), (2,), (3,)]),
        (range(6), 4, [(0, 1, 2, 3), (1, 2, 3, 4), (2, 3, 4, 5)]),
        ((c for c in "xyz"), 2, [("x", "y"), ("y", "z")]),
        ([0.5, 0.25, 0.125], 2, [(0.5, 0.25), (0.25, 0.125)]),
    ],
)
def test_sliding_window(items, n, expected):
    assert list(iterables.sliding_window(items, n)) == expected


def test_sliding_window_rejects_zero():
    with pytest.raises(ValueError):
        list(iterables.sliding_window([1, 2], 0))


@pytest.mark.parametrize(
    ("nested", "depth", "expected"),
    [
        ([1, [2, (3, [4])], 5], None, [1, 2, 3, 4, 5]),
        ([1, [2, [3, [4]]]], 1, [1, 2, [3, [4]]]),
        ([1, [2, [3, [4]]]], 0, [1, [2, [3, [4]]]]),
        ([1, [2, [3, [4]]]], 2, [1, 2, 3, [4]]),
        ([], None, []),
        ([[], [[]], ()], None, []),
        (["ab", ["cd", b"ef"]], None, ["ab", "cd", b"ef"]),
        ([{"a": 1}, [{2, 3}]], None, [{"a": 1}, {2, 3}]),
        (((1, 2), (3, (4, 5))), None, [1, 2, 3, 4, 5]),
    ],
)
def test_flatten(nested, depth, expected):
    assert list(iterables.flatten(nested, depth=depth)) == expected


def test_flatten_errors():
    with pytest.raises(ValueError):
        list(iterables.flatten([1, [2]], depth=-1))
    with pytest.raises(TypeError):
        list(iterables.flatten("abc"))


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([1, 2, 3], [(1, 2), (2, 3)]),
        ([1], []),
        ([], []),
        ("ab", [("a", "b")]),
        ([None, None], [(None, None)]),
        (range(5), [(0, 1), (1, 2), (2, 3), (3, 4)]),
        (iter([3.5, 1.0, 2.0]), [(3.5, 1.0), (1.0, 2.0)]),
        ([[1], [2], [3]], [([1], [2]), ([2], [3])]),
    ],
)
def test_pairwise(items, expected):
    assert list(iterables.pairwise(items)) == expected


@pytest.mark.parametrize(
    ("inputs", "longest", "expected"),
    [
        (("abc", [1, 2], "XYZW"), True, ["a", 1, "X", "b", 2, "Y", "c", "Z", "W"]),
        (("abc", [1], "XYZ"), False, ["a", 1, "X", "b"]),
        (("abc",), True, ["a", "b", "c"]),
        ((), True, []),
        (([], [1, 2]), True, [1, 2]),
        (([], [1, 2]), False, []),
        (([1, 2], [3, 4]), False, [1, 3, 2, 4]),
        ((range(3), range(10, 12)), True, [0, 10, 1, 11, 2]),
    ],
)
def test_interleave(inputs, longest, expected):
    assert list(iterables.interleave(*inputs, longest=longest)) == expected


@pytest.mark.parametrize(
    ("values", "func", "initial", "expected"),
    [
        ([1, 2, 3, 4], operator.add, None, [1, 3, 6, 10]),
        ([2, 3, 4], operator.mul, 1, [1, 2, 6, 24]),
        ([], operator.add, None, []),
        ([], operator.add, 100, [100]),
        ([5], operator.sub, None, [5]),
        ([5, 1, 7, 3], max, None, [5, 5, 7, 7]),
        ([0.1, 0.2, 0.3], operator.add, None, [0.1, 0.30000000000000004, 0.6000000000000001]),
        (["a", "b", "c"], operator.add, "", ["", "a", "ab", "abc"]),
        ([3, -1, 2], min, 0, [0, 0, -1, -1]),
    ],
)
def test_running_totals(values, func, initial, expected):
    assert list(iterables.running_totals(values, func, initial)) == expected


def test_running_totals_default_func():
    assert list(iterables.running_totals(range(5))) == [0, 1, 3, 6, 10]
    assert list(iterables.running_totals([1.5, -1.5])) == [1.5, 0.0]


@pytest.mark.parametrize(
    ("items", "key", "expected"),
    [
        ("AAAABBBCCDAABBB", None, ["A", "B", "C", "D"]),
        (["a", "B", "b", "A"], str.lower, ["a", "B"]),
        ([], None, []),
        ([1, 2, 3], None, [1, 2, 3]),
        ([[1], [2], [1]], None, [[1], [2]]),
        ([1, -1, 2, -2, 3], abs, [1, 2, 3]),
        (["apple", "avocado", "banana", "blueberry"], first_char, ["apple", "banana"]),
        ([1, 1.0, True, "1"], None, [1, "1"]),
        ([{"k": 1}, {"k": 1}, {"k": 2}], None, [{"k": 1}, {"k": 2}]),
    ],
)
def test_unique_everseen(items, key, expected):
    assert list(iterables.unique_everseen(items, key=key)) == expected


@pytest.mark.parametrize(
    ("items", "pred", "expected"),
    [
        ([1, 2, 3, 3, 2, 5, 6], descending, [[1, 2, 3, 3], [2, 5, 6]]),
        ([], descending, []),
        ([4], descending, [[4]]),
        ([5, 4, 3], descending, [[5], [4], [3]]),
        ([1, 3, 5, 6, 8, 9], differ_in_parity, [[1, 3, 5], [6, 8], [9]]),
        ([1, 2, 3], operator.ne, [[1], [2], [3]]),
        (["a", "a", "b"], operator.ne, [["a", "a"], ["b"]]),
        ((x for x in [2, 4, 1]), operator.gt, [[2, 4], [1]]),
    ],
)
def test_split_when(items, pred, expected):
    assert list(iterables.split_when(items, pred)) == expected
