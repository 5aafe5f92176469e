import pickle
import unittest

import pytest

from samplelib.shapes import Interval, Matrix


@pytest.mark.parametrize(
    ("start", "end", "length"),
    [(0, 10, 10), (-1.5, 2, 3.5), (3, 3, 0), (-10, -4, 6), (0.1, 0.3, 0.19999999999999998),
     (10**12, 10**12 + 1, 1), (-2.5, -2.5, 0.0), (1e-9, 1.0, 0.999999999)],
)
def test_length(start, end, length):
    assert Interval(start, end).length() == length


def test_constructor_checks():
    with pytest.raises(ValueError):
        Interval(2, 1)
    with pytest.raises(TypeError):
        Interval("0", 1)
    with pytest.raises(TypeError):
        Interval(0, True)


@pytest.mark.parametrize(
    ("interval", "value", "inside"),
    [
        (Interval(0, 10), 10, True),
        (Interval(0, 10), 0, True),
        (Interval(0, 10), 10.000001, False),
        (Interval(0, 10), -0.0, True),
        (Interval(0, 10), Interval(2, 11), False),
        (Interval(0, 10), Interval(2, 9), True),
        (Interval(0, 10), Interval(0, 10), True),
        (Interval(-5, -1), -3, True),
        (Interval(-5, -1), Interval(-6, -2), False),
        (Interval(1.5, 1.5), 1.5, True),
    ],
)
def test_contains(interval, value, inside):
    assert interval.contains(value) is inside


@pytest.mark.parametrize("bad", ["5", None, [1, 2], True])
def test_contains_rejects(bad):
    with pytest.raises(TypeError):
        Interval(0, 10).contains(bad)


@pytest.mark.parametrize(
    ("a", "b", "overlap", "common"),
    [
        (Interval(0, 5), Interval(3, 9), True, Interval(3, 5)),
        (Interval(0, 5), Interval(5, 9), True, Interval(5, 5)),
        (Interval(0, 5), Interval(6, 9), False, None),
        (Interval(3, 9), Interval(0, 5), True, Interval(3, 5)),
        (Interval(0, 10), Interval(2, 3), True, Interval(2, 3)),
        (Interval(-3, -1), Interval(-2.5, 4), True, Interval(-2.5, -1)),
        (Interval(0.1, 0.2), Interval(0.2000001, 1), False, None),
        (Interval(1, 1), Interval(1, 1), True, Interval(1, 1)),
        (Interval(-10, -5), Interval(5, 10), False, None),
    ],
)
def test_overlaps_and_intersection(a, b, overlap, common):
    assert a.overlaps(b) is overlap
    assert b.overlaps(a) is overlap
    assert a.intersection(b) == common


def test_overlaps_rejects_non_interval():
    with pytest.raises(TypeError):
        Interval(0, 1).overlaps((0, 1))
    with pytest.raises(TypeError):
        Interval(0, 1).intersection([0, 1])


@pytest.mark.parametrize(
    ("start", "end", "delta", "expected"),
    [(0, 10, 5, Interval(5, 15)), (0, 10, -5, Interval(-5, 5)), (1, 2, 0, Interval(1, 2)),
     (0, 1, 0.5, Interval(0.5, 1.5)), (-1.5, 1.5, 1.5, Interval(0.0, 3.0)),
     (10**9, 10**9, -(10**9), Interval(0, 0)), (2, 3, -2.25, Interval(-0.25, 0.75))],
)
def test_shift(start, end, delta, expected):
    interval = Interval(start, end)
    assert interval.shift(delta) is interval
    assert interval == expected


def test_shift_rejects_non_number():
    interval = Interval(0, 1)
    with pytest.raises(TypeError):
        interval.shift("1")
    with pytest.raises(TypeError):
        interval.shift(False)
    assert interval == Interval(0, 1)


@pytest.mark.parametrize(
    ("start", "end", "margin", "expected"),
    [(0, 10, 2, Interval(-2, 12)), (0, 10, -5, Interval(5, 5)), (0, 10, 0, Interval(0, 10)),
     (1.5, 2.5, 0.25, Interval(1.25, 2.75)), (-4, -2, -1, Interval(-3, -3)),
     (0, 0, 3, Interval(-3, 3)), (0, 1, -0.5, Interval(0.5, 0.5))],
)
def test_expand(start, end, margin, expected):
    interval = Interval(start, end)
    assert interval.expand(margin) is None
    assert interval == expected


@pytest.mark.parametrize(("start", "end", "margin"), [(0, 10, -6), (0, 0, -1), (0, 1, -0.51)])
def test_expand_rejects_shrinking_past_a_point(start, end, margin):
    interval = Interval(start, end)
    with pytest.raises(ValueError):
        interval.expand(margin)
    assert interval == Interval(start, end)


@pytest.mark.parametrize(
    ("intervals", "merged"),
    [
        ([Interval(5, 8), Interval(1, 3), Interval(2, 4)], [Interval(1, 4), Interval(5, 8)]),
        ([], []),
        ([Interval(0, 1)], [Interval(0, 1)]),
        ([Interval(0, 1), Interval(1, 2)], [Interval(0, 2)]),
        ([Interval(0, 10), Interval(2, 3), Interval(4, 5)], [Interval(0, 10)]),
        ([Interval(3, 4), Interval(0, 1)], [Interval(0, 1), Interval(3, 4)]),
        ([Interval(-1.5, 0.5), Interval(0.5, 0.75), Interval(2, 2)],
         [Interval(-1.5, 0.75), Interval(2, 2)]),
        ([Interval(1, 2), Interval(1, 2), Interval(1, 5)], [Interval(1, 5)]),
    ],
)
def test_merge_all(intervals, merged):
    before = [Interval(iv.start, iv.end) for iv in intervals]
    result = Interval.merge_all(intervals)
    assert result == merged
    assert intervals == before
    assert all(out is not src for out in result for src in intervals)


@pytest.mark.parametrize(
    ("text", "expected", "types"),
    [
        ("[ -2, 3.5 ]", Interval(-2, 3.5), (int, float)),
        ("[0,10]", Interval(0, 10), (int, int)),
        ("  [1.0, 2.0]  ", Interval(1.0, 2.0), (float, float)),
        ("[-3,-3]", Interval(-3, -3), (int, int)),
        ("[0.5, 100]", Interval(0.5, 100), (float, int)),
        ("[.25, 1.]", Interval(0.25, 1.0), (float, float)),
    ],
)
def test_parse(text, expected, types):
    interval = Interval.parse(text)
    assert interval == expected
    assert (type(interval.start), type(interval.end)) == types


@pytest.mark.parametrize("text", ["1, 2", "[1 2]", "[a, b]", "[]", "(1, 2)", "[1, 2, 3]"])
def test_parse_rejects(text):
    with pytest.raises(ValueError):
        Interval.parse(text)


def test_parse_rejects_reversed_bounds():
    with pytest.raises(ValueError):
        Interval.parse("[5, 1]")
    with pytest.raises(ValueError):
        Interval.parse("[1.2.3, 4]")


class TestMatrix(unittest.TestCase):
    def test_shape(self):
        self.assertEqual(Matrix([[1, 2, 3]]).shape(), (1, 3))
        self.assertEqual(Matrix([[1], [2]]).shape(), (2, 1))
        self.assertEqual(Matrix.identity(4).shape(), (4, 4))

    def test_constructor_checks(self):
        with self.assertRaises(ValueError):
            Matrix([])
        with self.assertRaises(ValueError):
            Matrix([[]])
        with self.assertRaises(ValueError):
            Matrix([[1, 2], [3]])

    def test_transpose(self):
        self.assertEqual(Matrix([[1, 2, 3], [4, 5, 6]]).transpose(), Matrix([[1, 4], [2, 5], [3, 6]]))
        self.assertEqual(Matrix([[1]]).transpose(), Matrix([[1]]))
        self.assertEqual(Matrix([[1, 2]]).transpose(), Matrix([[1], [2]]))
        self.assertEqual(Matrix([[0.5], [-1.5]]).transpose(), Matrix([[0.5, -1.5]]))
        self.assertEqual(Matrix.identity(3).transpose(), Matrix.identity(3))
        m = Matrix([[1, 2], [3, 4]])
        self.assertEqual(m.transpose().transpose(), m)
        self.assertEqual(Matrix([["a", "b"], ["c", "d"]]).transpose(), Matrix([["a", "c"], ["b", "d"]]))
        self.assertIsNot(m.transpose(), m)

    def test_multiply(self):
        self.assertEqual(Matrix([[1, 2], [3, 4]]).multiply(Matrix([[5], [6]])), Matrix([[17], [39]]))
        self.assertEqual(Matrix([[1, 2], [3, 4]]).multiply(Matrix.identity(2)), Matrix([[1, 2], [3, 4]]))
        self.assertEqual(Matrix([[1, 2, 3]]).multiply(Matrix([[1], [1], [1]])), Matrix([[6]]))
        self.assertEqual(Matrix([[1], [2]]).multiply(Matrix([[3, 4]])), Matrix([[3, 4], [6, 8]]))
        self.assertEqual(Matrix([[0.5, 0.5]]).multiply(Matrix([[2.0], [4.0]])), Matrix([[3.0]]))
        self.assertEqual(Matrix([[0, 1], [1, 0]]).multiply(Matrix([[0, 1], [1, 0]])), Matrix.identity(2))
        with self.assertRaises(ValueError):
            Matrix([[1, 2]]).multiply(Matrix([[1, 2]]))
        with self.assertRaises(TypeError):
            Matrix([[1]]).multiply([[1]])

    def test_determinant(self):
        self.assertEqual(Matrix([[2, 0, 1], [1, 3, 2], [1, 1, 2]]).determinant(), 6.0)
        self.assertEqual(Matrix([[4]]).determinant(), 4.0)
        self.assertEqual(Matrix([[1, 2], [3, 4]]).determinant(), -2.0)
        self.assertEqual(Matrix([[1, 2], [2, 4]]).determinant(), 0.0)
        self.assertEqual(Matrix([[0, 1], [1, 0]]).determinant(), -1.0)
        self.assertEqual(Matrix.identity(5).determinant(), 1.0)
        self.assertAlmostEqual(Matrix([[0.5, 1.5], [2.5, -1.0]]).determinant(), -4.25)
        self.assertEqual(Matrix([[0, 0], [0, 0]]).determinant(), 0.0)
        with self.assertRaises(ValueError):
            Matrix([[1, 2, 3], [4, 5, 6]]).determinant()

    def test_scale_in_place(self):
        m = Matrix([[1, 2], [3, 4]])
        self.assertIsNone(m.scale_in_place(2))
        self.assertEqual(m, Matrix([[2, 4], [6, 8]]))
        m.scale_in_place(0.5)
        self.assertEqual(m, Matrix([[1.0, 2.0], [3.0, 4.0]]))
        m.scale_in_place(-1)
        self.assertEqual(m.rows, [[-1.0, -2.0], [-3.0, -4.0]])
        ints = Matrix([[1, 2]])
        ints.scale_in_place(1.0)
        self.assertEqual([type(x) for x in ints.rows[0]], [int, int])
        zero = Matrix([[5]])
        zero.scale_in_place(0)
        self.assertEqual(zero.rows, [[0]])
        with self.assertRaises(TypeError):
            zero.scale_in_place("2")
        with self.assertRaises(TypeError):
            zero.scale_in_place(None)

    def test_trace(self):
        self.assertEqual(Matrix([[1, 2], [3, 4]]).trace(), 5)
        self.assertEqual(Matrix([[7]]).trace(), 7)
        self.assertEqual(Matrix.identity(6).trace(), 6)
        self.assertEqual(Matrix([[0.5, 9], [9, 0.25]]).trace(), 0.75)
        self.assertEqual(Matrix([[-1, 0, 0], [0, -2, 0], [0, 0, 3]]).trace(), 0)
        with self.assertRaises(ValueError):
            Matrix([[1, 2]]).trace()

    def test_identity(self):
        self.assertEqual(Matrix.identity(1), Matrix([[1]]))
        self.assertEqual(Matrix.identity(2), Matrix([[1, 0], [0, 1]]))
        self.assertEqual(Matrix.identity(3).rows[2], [0, 0, 1])
        for bad in (0, -1, 2.0, "3"):
            with self.assertRaises(ValueError):
                Matrix.identity(bad)


def test_shapes_pickle():
    interval = Interval(-1, 2.5)
    assert pickle.loads(pickle.dumps(interval)) == interval
    matrix = Matrix([[1, 2], [3, 4.5]])
    assert pickle.loads(pickle.dumps(matrix)) == matrix


@pytest.mark.parametrize(
    ("rows", "factor", "expected"),
    [([[1, 2]], 3, [[3, 6]]), ([[1.5], [2.5]], 2, [[3.0], [5.0]]), ([[1, -1]], -2.5, [[-2.5, 2.5]]),
     ([[7]], 1, [[7]]), ([[0, 0], [0, 0]], 10**9, [[0, 0], [0, 0]]), ([[2]], 0.0, [[0.0]])],
)
def test_scale_in_place_rows(rows, factor, expected):
    matrix = Matrix(rows)
    matrix.scale_in_place(factor)
    assert matrix.rows == expected


@pytest.mark.parametrize(
    ("rows", "trace"),
    [([[1, 2], [3, 4]], 5), ([[2.5]], 2.5), ([[1, 0, 0], [0, 1, 0], [0, 0, -1]], 1),
     ([[10**12, 1], [1, 10**12]], 2 * 10**12)],
)
def test_trace_rows(rows, trace):
    assert Matrix(rows).trace() == trace
