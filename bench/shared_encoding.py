"""Encoding a value whose objects are reached by several paths: each object encoded once
(the runner's default) against walking it again on every path (`share=False`, the baseline),
in the same run, with the same bytes out.

  lattice — levels of objects each holding the level below twice (2**levels paths)
  grammar — a pyparsing `infix_notation` grammar as a method's `self` after a call, when
            `--pyparsing DIR` names a folder pyparsing imports from (an unpacked sdist)

    python bench/shared_encoding.py [--rounds 20] [--pyparsing /path/to/pyparsing-3.1.4]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # this checkout's code, whatever else is installed

from replicate.jail.runner.base import EncodeLimits  # noqa: E402
from replicate.jail.runner.channel import _dumps  # noqa: E402
from replicate.jail.runner.encoding import _Encoder, encode  # noqa: E402

LIMITS = EncodeLimits(10_000, 64, 262_144)  # what a task's grading settings send the runner


class Level:
    below: Any
    again: Any
    n: int


def lattice(levels: int) -> Any:
    node: Any = {"leaf": list(range(20)), "name": "bottom"}
    for n in range(levels):
        top = Level()
        top.below, top.again = node, node
        top.n = n
        node = top
    return node


def grammar(folder: str) -> Any:
    sys.path.append(folder)
    import pyparsing as pp

    integer = pp.Word(pp.nums).set_parse_action(lambda t: int(t[0]))
    operand = integer | pp.Word(pp.alphas, pp.alphanums + "_")
    signs = [("-", 1, pp.OpAssoc.RIGHT), (pp.one_of("* /"), 2, pp.OpAssoc.LEFT)]
    expr = pp.infix_notation(operand, [*signs, (pp.one_of("+ -"), 2, pp.OpAssoc.LEFT)])
    expr.parse_string("1 + 2 * x")
    return expr


def best_ms(work: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


def measure(name: str, value: Any, rounds: int) -> None:
    walked, shared = _Encoder(LIMITS, share=False), _Encoder(LIMITS)
    for encoder in (walked, shared):
        with contextlib.suppress(Exception):  # too large: the visits so far still tell
            encoder.enc(value, 0)
    same = _dumps(encode(value, LIMITS)) == _dumps(encode(value, LIMITS, share=False))
    walk_ms = best_ms(lambda: encode(value, LIMITS, share=False), rounds)
    share_ms = best_ms(lambda: encode(value, LIMITS), rounds)
    print(
        f"{name:12} {encode(value, LIMITS)['t']:9} objects {len(walked.visits):5} "
        f"visits {sum(walked.visits.values()):6}  walked {walk_ms:8.2f} ms  "
        f"shared {share_ms:7.2f} ms  {walk_ms / share_ms:5.1f}x  same bytes: {same}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--pyparsing", help="a folder pyparsing imports from")
    args = parser.parse_args()
    for levels in (4, 6, 7):
        measure(f"lattice {levels}", lattice(levels), args.rounds)
    if args.pyparsing:
        measure("grammar", grammar(args.pyparsing), args.rounds)


if __name__ == "__main__":
    main()
