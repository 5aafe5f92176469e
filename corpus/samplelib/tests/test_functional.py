import operator
import unittest

import pytest

from samplelib import functional, numeric


def first_letter(word):
    return word[0]


def parity(n):
    return "even" if n % 2 == 0 else "odd"


def is_positive(n):
    return n > 0


def double(x):
    return x * 2


def increment(x):
    return x + 1


def append_digit(acc, digit):
    return acc * 10 + digit


def collect(acc, item):
    return acc + [item]


@pytest.mark.parametrize(
    ("items", "key", "expected"),
    [
        (["apple", "avocado", "banana", "cherry", "blueberry"], first_letter,
         {"a": ["apple", "avocado"], "b": ["banana", "blueberry"], "c": ["cherry"]}),
        ([1, 2, 3, 4, 5], parity, {"odd": [1, 3, 5], "even": [2, 4]}),
        ([], parity, {}),
        (["a", "bb", "cc", "d", ""], len, {1: ["a", "d"], 2: ["bb", "cc"], 0: [""]}),
        ([3, -3, 2, -2], abs, {3: [3, -3], 2: [2, -2]}),
        ([0, 1, "", "x", None], bool, {False: [0, "", None], True: [1, "x"]}),
        (range(10), numeric.is_prime,
         {False: [0, 1, 4, 6, 8, 9], True: [2, 3, 5, 7]}),
        ([(1, "a"), (2, "b"), (1, "c")], operator.itemgetter(0),
         {1: [(1, "a"), (1, "c")], 2: [(2, "b")]}),
    ],
)
def test_group_by(items, key, expected):
    result = functional.group_by(items, key)
    assert result == expected
    assert list(result) == list(expected)


def test_group_by_requires_callable():
    with pytest.raises(TypeError):
        functional.group_by([1, 2], "len")


@pytest.mark.parametrize(
    ("items", "key", "expected"),
    [
        ([1, 2, 3, 4, 5, 6, 7], parity, {"even": 3, "odd": 4}),
        ("mississippi", str.upper, {"I": 4, "M": 1, "P": 2, "S": 4}),
        ([], len, {}),
        (["aa", "b", "cc", "ddd"], len, {1: 1, 2: 2, 3: 1}),
        ([-2, -1, 0, 1, 2], abs, {0: 1, 1: 2, 2: 2}),
        ([0.5, 1.5, 2.5], round, {0: 1, 2: 2}),
        (range(20), numeric.is_prime, {False: 12, True: 8}),
        (["x", "y", "x"], str, {"x": 2, "y": 1}),
    ],
)
def test_count_by(items, key, expected):
    result = functional.count_by(items, key)
    assert result == expected
    assert list(result) == sorted(expected)


@pytest.mark.parametrize(
    ("pred", "items", "expected"),
    [
        (str.isdigit, ["1", "a", "22", "b"], (["1", "22"], ["a", "b"])),
        (is_positive, [3, -1, 0, 7, -5], ([3, 7], [-1, 0, -5])),
        (is_positive, [], ([], [])),
        (bool, [0, "", None, [], 1], ([1], [0, "", None, []])),
        (numeric.is_prime, range(12), ([2, 3, 5, 7, 11], [0, 1, 4, 6, 8, 9, 10])),
        (str.isupper, "aBcD", (["B", "D"], ["a", "c"])),
        (callable, [len, 1, print], ([len, print], [1])),
        (is_positive, [1.5, -0.0, 0.0], ([1.5], [-0.0, 0.0])),
    ],
)
def test_partition(pred, items, expected):
    assert functional.partition(pred, items) == expected


class TestFold(unittest.TestCase):
    def test_without_initial(self):
        self.assertEqual(functional.fold(append_digit, [1, 2, 3]), 123)
        self.assertEqual(functional.fold(operator.add, [5]), 5)
        self.assertEqual(functional.fold(operator.sub, [10, 1, 2]), 7)
        self.assertEqual(functional.fold(max, [3, 9, 2]), 9)
        self.assertEqual(functional.fold(operator.add, ["a", "b", "c"]), "abc")

    def test_with_initial(self):
        self.assertEqual(functional.fold(collect, "ab", []), ["a", "b"])
        self.assertEqual(functional.fold(operator.add, [], 0), 0)
        self.assertEqual(functional.fold(operator.mul, range(1, 6), 1), 120)
        self.assertEqual(functional.fold(operator.truediv, [2, 5], 100.0), 10.0)
        self.assertIsNone(functional.fold(operator.add, [], None))

    def test_empty_without_initial(self):
        with self.assertRaises(TypeError):
            functional.fold(operator.add, [])
        with self.assertRaises(TypeError):
            functional.fold(operator.add, iter(()))


@pytest.mark.parametrize(
    ("func", "value", "n", "expected"),
    [
        (double, 1, 10, 1024),
        (double, 5, 0, 5),
        (increment, -3, 3, 0),
        (str.upper, "abc", 1, "ABC"),
        (abs, -7, 2, 7),
        (numeric.digital_root, 987654321, 1, 9),
        (double, 0.1, 3, 0.8),
        (list, "ab", 2, ["a", "b"]),
    ],
)
def test_apply_n(func, value, n, expected):
    assert functional.apply_n(func, value, n) == expected


@pytest.mark.parametrize(("n", "error"), [(-1, ValueError), (2.0, TypeError), (True, TypeError)])
def test_apply_n_errors(n, error):
    with pytest.raises(error):
        functional.apply_n(double, 1, n)


@pytest.mark.parametrize(
    ("value", "funcs", "expected"),
    [
        ("  Hello ", (str.strip, str.upper, len), 5),
        (3, (), 3),
        (3, (double,), 6),
        (3, (double, increment), 7),
        (3, (increment, double), 8),
        ([3, 1, 2], (sorted, list.copy, len), 3),
        ("a,b,c", (str.upper,), "A,B,C"),
        (-2.5, (abs, round), 2),
    ],
)
def test_pipe(value, funcs, expected):
    assert functional.pipe(value, *funcs) == expected


def test_pipe_rejects_non_callable():
    with pytest.raises(TypeError):
        functional.pipe(1, double, 3)


def test_compose():
    assert functional.compose(len, str.strip)("  abc ") == 3
    assert functional.compose(double, increment)(5) == 12
    assert functional.compose(increment, double)(5) == 11
    assert functional.compose(str.upper)("x") == "X"
    assert functional.compose(sum, sorted)([3, 1]) == 4
    with pytest.raises(TypeError):
        functional.compose()


@pytest.mark.parametrize(
    ("pred", "items", "default", "expected"),
    [
        (is_positive, [-1, 5, 2, 7], None, 5),
        (is_positive, [-1, -2], None, None),
        (is_positive, [], "none", "none"),
        (str.isdigit, "ab3c4", None, "3"),
        (numeric.is_prime, range(90, 100), -1, 97),
        (bool, [0, "", [], (1,)], None, (1,)),
        (str.istitle, ["lower", "Title", "Case"], None, "Title"),
        (is_positive, iter([0.0, 1e-9]), 0, 1e-9),
    ],
)
def test_find_first(pred, items, default, expected):
    assert functional.find_first(pred, items, default) == expected


def test_find_first_requires_callable():
    with pytest.raises(TypeError):
        functional.find_first(None, [1])


@pytest.mark.parametrize(
    ("func", "iterables", "expected"),
    [
        (max, ([1, 5, 3], [4, 2, 6]), [4, 5, 6]),
        (operator.add, ([1, 2], [10, 20, 30]), [11, 22]),
        (operator.mul, ("ab", [2, 3]), ["aa", "bbb"]),
        (abs, ([-1, 2, -3],), [1, 2, 3]),
        (operator.add, ([], [1]), []),
        (pow, ([2, 3], [3, 2], [5, 5]), [3, 4]),
        (str.join, ([",", "-"], ["ab", "cd"]), ["a,b", "c-d"]),
        (divmod, ([7, 9.5], [2, 2]), [(3, 1), (4.0, 1.5)]),
    ],
)
def test_zip_with(func, iterables, expected):
    assert functional.zip_with(func, *iterables) == expected


def test_zip_with_needs_iterables():
    with pytest.raises(TypeError):
        functional.zip_with(max)


@pytest.mark.parametrize(
    ("func", "mapping", "expected"),
    [
        (len, {"a": "xyz", "b": ""}, {"a": 3, "b": 0}),
        (double, {}, {}),
        (double, {1: 1, 2: 2.5}, {1: 2, 2: 5.0}),
        (sorted, {"k": [3, 1, 2]}, {"k": [1, 2, 3]}),
        (str.upper, {"x": "a", "y": "b"}, {"x": "A", "y": "B"}),
        (numeric.is_prime, {"two": 2, "nine": 9}, {"two": True, "nine": False}),
        (abs, {(1, 2): -5}, {(1, 2): 5}),
        (type, {"n": None}, {"n": type(None)}),
    ],
)
def test_map_values(func, mapping, expected):
    assert functional.map_values(func, mapping) == expected


def test_map_values_rejects_non_mapping():
    with pytest.raises(TypeError):
        functional.map_values(len, [("a", "b")])


@pytest.mark.parametrize(
    ("funcs", "args", "expected"),
    [((abs,), (-3,), 3), ((str.strip, str.lower), ("  Hi ",), "hi"), ((len, list), ("abc",), 3),
     ((double, double, double), (1,), 8), ((sorted,), ([3, 1, 2],), [1, 2, 3]),
     ((increment, max), (4, 9, 2), 10), ((str, pow), (2, 10), "1024")],
)
def test_compose_applies_right_to_left(funcs, args, expected):
    assert functional.compose(*funcs)(*args) == expected
