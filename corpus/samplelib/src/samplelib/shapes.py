"""Closed numeric intervals and small dense matrices."""

import re

_INTERVAL_RE = re.compile(r"^\s*\[\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*\]\s*$")


def _number(text):
    value = float(text)
    return int(value) if value.is_integer() and "." not in text else value


class Interval:
    """The closed interval ``[start, end]`` of real numbers, ``start <= end``."""

    def __init__(self, start, end):
        for bound in (start, end):
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise TypeError("interval bounds must be numbers")
        if start > end:
            raise ValueError(f"empty interval: {start} > {end}")
        self.start = start
        self.end = end

    def __repr__(self):
        return f"Interval({self.start!r}, {self.end!r})"

    def __eq__(self, other):
        if not isinstance(other, Interval):
            return NotImplemented
        return (self.start, self.end) == (other.start, other.end)

    def length(self):
        """Length ``end - start``.

        >>> Interval(-1.5, 2).length()
        3.5
        """
        span = self.end - self.start
        if span < 0:
            raise ValueError("corrupt interval")
        return span

    def contains(self, value):
        """True if ``value`` (a number or an Interval) lies inside this interval.

        >>> Interval(0, 10).contains(10), Interval(0, 10).contains(Interval(2, 11))
        (True, False)
        """
        if isinstance(value, Interval):
            return self.start <= value.start and value.end <= self.end
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("contains() takes a number or an Interval")
        return self.start <= value <= self.end

    def overlaps(self, other):
        """True if the two closed intervals share at least one point."""
        if not isinstance(other, Interval):
            raise TypeError("overlaps() takes an Interval")
        latest_start = max(self.start, other.start)
        earliest_end = min(self.end, other.end)
        return latest_start <= earliest_end

    def intersection(self, other):
        """The common part of both intervals as a new Interval, or None if they are disjoint.

        >>> Interval(0, 5).intersection(Interval(3, 9))
        Interval(3, 5)
        """
        if not self.overlaps(other):
            return None
        start = max(self.start, other.start)
        end = min(self.end, other.end)
        return Interval(start, end)

    def shift(self, delta):
        """Move the interval by ``delta`` in place and return it."""
        if isinstance(delta, bool) or not isinstance(delta, (int, float)):
            raise TypeError("delta must be a number")
        self.start += delta
        self.end += delta
        return self

    def expand(self, margin):
        """Grow (or, with a negative margin, shrink) both ends by ``margin`` in place.

        Shrinking past a single point is a ``ValueError`` and leaves the interval unchanged.
        """
        new_start = self.start - margin
        new_end = self.end + margin
        if new_start > new_end:
            raise ValueError("margin would make the interval empty")
        self.start, self.end = new_start, new_end

    @staticmethod
    def merge_all(intervals):
        """Merge overlapping or touching intervals into a sorted list of disjoint new ones.

        >>> Interval.merge_all([Interval(5, 8), Interval(1, 3), Interval(2, 4)])
        [Interval(1, 4), Interval(5, 8)]
        """
        ordered = sorted(intervals, key=lambda iv: (iv.start, iv.end))
        merged = []
        for interval in ordered:
            if merged and interval.start <= merged[-1].end:
                merged[-1].end = max(merged[-1].end, interval.end)
            else:
                merged.append(Interval(interval.start, interval.end))
        return merged

    @classmethod
    def parse(cls, text):
        """Parse ``"[start, end]"``; integers stay ints, decimals become floats.

        >>> Interval.parse("[ -2, 3.5 ]")
        Interval(-2, 3.5)
        """
        match = _INTERVAL_RE.match(text)
        if match is None:
            raise ValueError(f"not an interval: {text!r}")
        start, end = (_number(group) for group in match.groups())
        return cls(start, end)


class Matrix:
    """A dense rectangular matrix stored as a list of row lists."""

    def __init__(self, rows):
        copied = [list(row) for row in rows]
        if not copied or not copied[0]:
            raise ValueError("a matrix needs at least one row and one column")
        if any(len(row) != len(copied[0]) for row in copied):
            raise ValueError("rows have different lengths")
        self.rows = copied

    def __repr__(self):
        return f"Matrix({self.rows!r})"

    def __eq__(self, other):
        if not isinstance(other, Matrix):
            return NotImplemented
        return self.rows == other.rows

    def shape(self):
        """``(number of rows, number of columns)``."""
        n_rows = len(self.rows)
        n_cols = len(self.rows[0])
        return n_rows, n_cols

    def transpose(self):
        """A new matrix with rows and columns swapped.

        >>> Matrix([[1, 2, 3], [4, 5, 6]]).transpose()
        Matrix([[1, 4], [2, 5], [3, 6]])
        """
        n_rows, n_cols = self.shape()
        columns = [[self.rows[r][c] for r in range(n_rows)] for c in range(n_cols)]
        return Matrix(columns)

    def multiply(self, other):
        """Matrix product ``self @ other`` as a new matrix.

        >>> Matrix([[1, 2], [3, 4]]).multiply(Matrix([[5], [6]]))
        Matrix([[17], [39]])
        """
        if not isinstance(other, Matrix):
            raise TypeError("multiply() takes a Matrix")
        if len(self.rows[0]) != len(other.rows):
            raise ValueError(f"shapes {self.shape()} and {other.shape()} do not align")
        columns = list(zip(*other.rows))
        product = [[sum(a * b for a, b in zip(row, col)) for col in columns] for row in self.rows]
        return Matrix(product)

    def determinant(self):
        """Determinant by Gaussian elimination with partial pivoting (a float).

        >>> Matrix([[2, 0, 1], [1, 3, 2], [1, 1, 2]]).determinant()
        6.0
        """
        n_rows, n_cols = self.shape()
        if n_rows != n_cols:
            raise ValueError("determinant of a non-square matrix")
        work = [[float(x) for x in row] for row in self.rows]
        det = 1.0
        for col in range(n_cols):
            pivot = max(range(col, n_rows), key=lambda r: abs(work[r][col]))
            if work[pivot][col] == 0.0:
                return 0.0
            if pivot != col:
                work[col], work[pivot] = work[pivot], work[col]
                det = -det
            det *= work[col][col]
            for r in range(col + 1, n_rows):
                factor = work[r][col] / work[col][col]
                for c in range(col, n_cols):
                    work[r][c] -= factor * work[col][c]
        return det

    def scale_in_place(self, factor):
        """Multiply every entry by ``factor`` in place; return None.

        A factor of exactly 1 leaves the matrix untouched (ints stay ints).
        """
        if isinstance(factor, bool) or not isinstance(factor, (int, float)):
            raise TypeError("factor must be a number")
        if factor == 1:
            return
        for row in self.rows:
            for c, value in enumerate(row):
                row[c] = value * factor

    def trace(self):
        """Sum of the diagonal of a square matrix."""
        n_rows, n_cols = self.shape()
        if n_rows != n_cols:
            raise ValueError("trace of a non-square matrix")
        return sum(self.rows[i][i] for i in range(n_rows))

    @classmethod
    def identity(cls, n):
        """The ``n`` x ``n`` identity matrix of ints.

        >>> Matrix.identity(2)
        Matrix([[1, 0], [0, 1]])
        """
        if not isinstance(n, int) or n < 1:
            raise ValueError("size must be a positive int")
        rows = [[1 if r == c else 0 for c in range(n)] for r in range(n)]
        return cls(rows)
