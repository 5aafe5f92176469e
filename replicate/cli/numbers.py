"""The kinds of number the options take, checked as the command line is read: a bad one is a
one-line error naming the option (`argument --workers: a whole number of 1 or more, not '0'`),
before any work starts.  Each is an argparse `type=`."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

N = TypeVar("N", int, float)


def _checked(
    parse: Callable[[str], N], holds: Callable[[N], bool], kind: str
) -> Callable[[str], N]:
    """An option's value: `parse(text)` where `holds` of it, else an error saying it is not
    `kind`."""

    def value(text: str) -> N:
        try:
            number = parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{kind}, not {text!r}") from None
        if not holds(number):
            raise argparse.ArgumentTypeError(f"{kind}, not {text!r}")
        return number

    return value


count = _checked(int, lambda n: n >= 1, "a whole number of 1 or more")
amount = _checked(int, lambda n: n >= 0, "a whole number of 0 or more")
port = _checked(int, lambda n: 0 <= n <= 65535, "a port from 0 to 65535")
seconds = _checked(float, lambda n: n > 0 and math.isfinite(n), "a number of seconds above 0")
positive = _checked(float, lambda n: n > 0 and math.isfinite(n), "a number above 0")
rate = _checked(float, lambda n: 0.0 <= n <= 1.0, "a number from 0 to 1")
