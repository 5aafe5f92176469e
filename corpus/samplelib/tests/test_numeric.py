import math
import unittest

import pytest

from samplelib import numeric


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([12, 18, -24], 6),
        ([7], 7),
        ([-7], 7),
        ([0, 0], 0),
        ([0, 9], 9),
        ([17, 34, 51], 17),
        ([2**40, 2**20 * 3], 2**20),
        ((15, 25, 35), 5),
        ([1, 999_999_937], 1),
    ],
)
def test_gcd_list(values, expected):
    assert numeric.gcd_list(values) == expected


def test_gcd_list_errors():
    with pytest.raises(ValueError):
        numeric.gcd_list([])
    with pytest.raises(TypeError):
        numeric.gcd_list([4, 2.0])
    with pytest.raises(TypeError):
        numeric.gcd_list([True, 2])


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([4, 6, 10], 60),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 2520),
        ([7], 7),
        ([-4, 6], 12),
        ([0, 5], 0),
        ([5, 0, 3], 0),
        ([13, 17], 221),
        (range(1, 4), 6),
    ],
)
def test_lcm_list(values, expected):
    assert numeric.lcm_list(values) == expected


def test_lcm_list_errors():
    with pytest.raises(ValueError):
        numeric.lcm_list(())
    with pytest.raises(TypeError):
        numeric.lcm_list(["3"])


@pytest.mark.parametrize(
    ("n", "expected"),
    [(-7, False), (0, False), (1, False), (2, True), (3, True), (4, False), (9, False),
     (25, False), (29, True), (97, True), (7919, True), (7917, False), (2**31 - 1, True)],
)
def test_is_prime(n, expected):
    assert numeric.is_prime(n) is expected


def test_is_prime_rejects_non_int():
    with pytest.raises(TypeError):
        numeric.is_prime(7.0)
    with pytest.raises(TypeError):
        numeric.is_prime("7")


@pytest.mark.parametrize(
    ("n", "factors"),
    [
        (1, []),
        (2, [2]),
        (12, [2, 2, 3]),
        (360, [2, 2, 2, 3, 3, 5]),
        (97, [97]),
        (1001, [7, 11, 13]),
        (2**10, [2] * 10),
        (600851475143, [71, 839, 1471, 6857]),
        (49, [7, 7]),
    ],
)
def test_prime_factors(n, factors):
    assert numeric.prime_factors(n) == factors
    assert math.prod(factors) == n


@pytest.mark.parametrize(("bad", "error"), [(0, ValueError), (-12, ValueError),
                                            (3.0, TypeError), (False, TypeError)])
def test_prime_factors_errors(bad, error):
    with pytest.raises(error):
        numeric.prime_factors(bad)


@pytest.mark.parametrize(
    ("n", "base", "expected"),
    [
        (255, 16, "ff"),
        (0, 2, "0"),
        (-10, 2, "-1010"),
        (35, 36, "z"),
        (36, 36, "10"),
        (1000, 10, "1000"),
        (-255, 16, "-ff"),
        (8, 8, "10"),
        (123456789, 7, "3026236221"),
    ],
)
def test_to_base(n, base, expected):
    assert numeric.to_base(n, base) == expected
    assert numeric.from_base(expected, base) == n


@pytest.mark.parametrize(("n", "base"), [(10, 1), (10, 37), (10, 0), (-1, -2)])
def test_to_base_rejects_bad_base(n, base):
    with pytest.raises(ValueError):
        numeric.to_base(n, base)


def test_to_base_rejects_non_int():
    with pytest.raises(TypeError):
        numeric.to_base(2.5, 10)


@pytest.mark.parametrize(
    ("text", "base", "expected"),
    [
        ("-FF", 16, -255),
        ("+101", 2, 5),
        ("  z ", 36, 35),
        ("0", 10, 0),
        ("777", 8, 511),
        ("Zz", 36, 1295),
    ],
)
def test_from_base(text, base, expected):
    assert numeric.from_base(text, base) == expected


@pytest.mark.parametrize(("text", "base"), [("", 10), ("-", 10), ("12", 2), ("g", 16),
                                            ("1 0", 10), ("10", 40)])
def test_from_base_errors(text, base):
    with pytest.raises(ValueError):
        numeric.from_base(text, base)


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [
        (15, 0, 10, 10),
        (-3, 0, 10, 0),
        (2.5, 0, 10, 2.5),
        (5, 5, 5, 5),
        (-1.5, -2.0, -1.0, -1.5),
        (0.0, 0.1, 0.2, 0.1),
        (10**20, 0, 10**6, 10**6),
        ("m", "a", "k", "k"),
    ],
)
def test_clamp(value, low, high, expected):
    assert numeric.clamp(value, low, high) == expected


def test_clamp_rejects_empty_range():
    with pytest.raises(ValueError):
        numeric.clamp(1, 10, 0)
    with pytest.raises(ValueError):
        numeric.clamp(0.5, 1.0, 0.99)


@pytest.mark.parametrize(
    ("x", "ndigits", "expected"),
    [
        (2.5, 0, 2.0),
        (3.5, 0, 4.0),
        (-2.5, 0, -2.0),
        (-3.5, 0, -4.0),
        (2.675, 2, 2.68),
        (1.005, 2, 1.0),
        (0.125, 2, 0.12),
        (0.135, 2, 0.14),
        (1234.5678, -2, 1200.0),
        (7, 0, 7.0),
        (1e-7, 3, 0.0),
    ],
)
def test_round_half_even(x, ndigits, expected):
    assert numeric.round_half_even(x, ndigits) == expected


def test_round_half_even_special_values():
    assert math.isnan(numeric.round_half_even(float("nan")))
    assert numeric.round_half_even(float("-inf"), 2) == float("-inf")
    with pytest.raises(TypeError):
        numeric.round_half_even("2.5")
    with pytest.raises(TypeError):
        numeric.round_half_even(True)


class TestStatistics(unittest.TestCase):
    def test_mean(self):
        self.assertEqual(numeric.mean([1, 2, 3, 4]), 2.5)
        self.assertEqual(numeric.mean([5]), 5.0)
        self.assertEqual(numeric.mean([0.1] * 10), 0.1)
        self.assertEqual(numeric.mean([-1.5, 1.5]), 0.0)
        self.assertEqual(numeric.mean(range(101)), 50.0)
        self.assertAlmostEqual(numeric.mean([1e16, 1.0, -1e16]), 1 / 3)
        self.assertEqual(numeric.mean((2, 3)), 2.5)
        with self.assertRaises(ValueError):
            numeric.mean([])

    def test_median(self):
        self.assertEqual(numeric.median([3, 1, 2]), 2)
        self.assertEqual(numeric.median([4, 1, 3, 2]), 2.5)
        self.assertEqual(numeric.median([7]), 7)
        self.assertEqual(numeric.median([1.5, -2.5]), -0.5)
        self.assertEqual(numeric.median([5, 5, 5, 1]), 5.0)
        self.assertEqual(numeric.median(range(10)), 4.5)
        self.assertEqual(numeric.median(iter([9, 1, 8])), 8)
        with self.assertRaises(ValueError):
            numeric.median([])

    def test_variance(self):
        self.assertEqual(numeric.variance([2, 4, 4, 4, 5, 5, 7, 9]), 4.0)
        self.assertAlmostEqual(numeric.variance([2, 4, 4, 4, 5, 5, 7, 9], sample=True), 32 / 7)
        self.assertEqual(numeric.variance([3]), 0.0)
        self.assertEqual(numeric.variance([1.5, 1.5, 1.5], sample=True), 0.0)
        self.assertAlmostEqual(numeric.variance([0.1, 0.2, 0.3]), 0.00666666666666667)
        self.assertEqual(numeric.variance([1, 2], sample=True), 0.5)
        with self.assertRaises(ValueError):
            numeric.variance([])
        with self.assertRaises(ValueError):
            numeric.variance([1.0], sample=True)


@pytest.mark.parametrize(
    ("xs", "ys", "x", "expected"),
    [
        ([0, 10, 20], [0.0, 100.0, 50.0], 15, 75.0),
        ([0, 10, 20], [0.0, 100.0, 50.0], 0, 0.0),
        ([0, 10, 20], [0.0, 100.0, 50.0], 20, 50.0),
        ([0, 10, 20], [0.0, 100.0, 50.0], 10, 100.0),
        ([-1.0, 1.0], [2.0, 4.0], 0.25, 3.25),
        ([1, 2, 4, 8], [1, 4, 16, 64], 3, 10.0),
        ([0, 1], [5, 5], 0.5, 5.0),
        ([0.0, 0.1, 0.3], [1.0, 2.0, 0.0], 0.2, 1.0),
    ],
)
def test_interpolate(xs, ys, x, expected):
    assert numeric.interpolate(xs, ys, x) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("xs", "ys", "x"),
    [
        ([0, 1], [0, 1, 2], 0.5),
        ([0], [0], 0),
        ([0, 0, 1], [1, 2, 3], 0.5),
        ([2, 1], [0, 0], 1.5),
        ([0, 1], [0, 1], 1.5),
        ([0, 1], [0, 1], -0.01),
    ],
)
def test_interpolate_errors(xs, ys, x):
    with pytest.raises(ValueError):
        numeric.interpolate(xs, ys, x)


@pytest.mark.parametrize(("n", "steps"), [(1, 0), (2, 1), (3, 7), (6, 8), (7, 16), (27, 111),
                                          (97, 118), (871, 178)])
def test_collatz_steps(n, steps):
    assert numeric.collatz_steps(n) == steps


@pytest.mark.parametrize(("bad", "error"), [(0, ValueError), (-5, ValueError), (2.0, TypeError)])
def test_collatz_steps_errors(bad, error):
    with pytest.raises(error):
        numeric.collatz_steps(bad)


@pytest.mark.parametrize(("n", "root"), [(0, 0), (7, 7), (10, 1), (38, 2), (493193, 2),
                                         (-493193, 2), (999999999999, 9), (123456789, 9)])
def test_digital_root(n, root):
    assert numeric.digital_root(n) == root


def test_digital_root_rejects_non_int():
    with pytest.raises(TypeError):
        numeric.digital_root("38")
