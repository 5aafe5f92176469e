"""Kill counts of a class's mutants by its recorded call sequences against recorded + widened.

    python bench/sequence_widening.py [--lib more-itertools==10.5.0]
        [--cls more_itertools/more.py:more_itertools.more:peekable] [--per-method 80]
        [--sequences 30] [--max-steps 20] [--seed 7]

The pinned sdist's tests run once with the sequence recorder (40 sequences of at most 40 steps),
the widened sequences are drawn and gated (`gen.sequences.widened_sequences`), and gen's own
mutants (`gen.mutants`, up to `--per-method` per method of the class) are replayed on both sets:
a mutant is killed by a set when one of its sequences fails against the reference's replay.
Printed: the mutants, those the recorded sequences kill, those recorded + widened kill, and the
ones only the widened sequences kill.
"""

from __future__ import annotations

import argparse
import ast
import tempfile
import textwrap
from pathlib import Path

from replicate.acquire import pypi
from replicate.core import CallSequence, ClassRef, GradingSettings
from replicate.core.progress import NullProgress
from replicate.gen.mutants import mutants
from replicate.gen.prepare import prepare_repo
from replicate.gen.sequences import widened_sequences
from replicate.grading import compare_sequences
from replicate.harvest import SequenceBudget, record_sequences
from replicate.inputs import StatefulBudget
from replicate.jail import Jail, Replay, replay
from replicate.sandbox import get_sandbox

SETTINGS = GradingSettings()


def class_mutants(source: str, qualname: str, per_method: int) -> list[tuple[str, str]]:
    """(label, whole file) per mutant of each method of the class."""
    lines = source.split("\n")
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == qualname)
    found = []
    for fn in cls.body:
        if not isinstance(fn, ast.FunctionDef) or fn.end_lineno is None:
            continue
        definition = textwrap.dedent("\n".join(lines[fn.lineno - 1 : fn.end_lineno]))
        for mutant in mutants(definition, limit=per_method, extra=True):
            body = textwrap.indent(mutant.text.rstrip("\n"), "    ").split("\n")
            text = "\n".join([*lines[: fn.lineno - 1], *body, *lines[fn.end_lineno :]])
            found.append((f"{fn.name}: {mutant.operator}, line {mutant.line}", text))
    return found


def killed(
    jail: Jail,
    cls: ClassRef,
    sequences: tuple[CallSequence, ...],
    expected: tuple[Replay, ...],
    text: str,
) -> bool:
    got = replay(jail, cls, sequences, SETTINGS, override=text.encode())
    pairs = zip(expected, got, strict=True)
    return any(not compare_sequences(e, g, SETTINGS).passed for e, g in pairs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="more-itertools==10.5.0")
    parser.add_argument("--cls", default="more_itertools/more.py:more_itertools.more:peekable")
    parser.add_argument("--per-method", type=int, default=80)
    parser.add_argument("--sequences", type=int, default=30)
    parser.add_argument("--max-steps", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    name, version = args.lib.split("==")
    path, module, qualname = args.cls.split(":")
    cls = ClassRef(path=path, module=module, qualname=qualname)
    root = Path(tempfile.mkdtemp(prefix="sequence-widening-"))
    ready = prepare_repo(
        str(pypi.sdist_repo(name, version, root)), None, root / "batch", False, NullProgress()
    )
    jail = Jail(ready.context, get_sandbox("local"))
    budget = SequenceBudget(max_steps=40, max_sequences=40)
    recorded = record_sequences(jail, {cls.key: cls}, budget)[cls.key]
    reference = replay(jail, cls, recorded, SETTINGS)
    widening = StatefulBudget(sequences=args.sequences, max_steps=args.max_steps)
    widened = widened_sequences(jail, cls, recorded, SETTINGS, widening, args.seed)
    print(
        f"{cls.key}: {len(recorded)} recorded sequences, {len(widened.sequences)} widened "
        f"(drawn {widened.drawn}, unstable {widened.unstable}, "
        f"raised at the class call {widened.raised_first})"
    )
    source = (ready.context.tree / path).read_text()
    found = class_mutants(source, qualname, args.per_method)
    by_recorded = by_both = 0
    for label, text in found:
        old = killed(jail, cls, recorded, reference, text)
        new = killed(jail, cls, widened.sequences, widened.expected, text)
        by_recorded += old
        by_both += old or new
        if new and not old:
            print(f"  killed only by the widened sequences: {label}")
    print(f"mutants {len(found)}: recorded kill {by_recorded}, recorded + widened {by_both}")


if __name__ == "__main__":
    main()
