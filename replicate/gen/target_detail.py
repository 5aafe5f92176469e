"""What minting saw of one target, in words: the detail behind a short drop reason of the golden
runs and the strength check (`replicate.harvest.detail` says what the harvest saw; the
baseline's words are `replicate.gen.baseline.weak_detail`).  The reasons stay short so the funnel
table can count them; the numbers, types and examples go here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from replicate.core import DropReason, GradingSettings, Strength
from replicate.grading import compare_outcome
from replicate.jail import wire

Outcome = wire.Outcome
SHOWN = 100  # characters of one example


def example(
    problem: str, first: Outcome | None, second: Outcome | None, settings: GradingSettings
) -> str:
    """The fact behind one input's `problem`, from its two runs' outcomes: the part of its
    outcome that cannot be compared ("<opaque re.Match> in args[0]"), the error that stopped it
    loading, where its runs differed ("return[1]: 0.5, then 0.25"); '' when there is none."""
    if first is None:
        return ""
    if first.get("status") == "load_error":
        return _cut(str(first.get("msg", "")))
    if problem.startswith(DropReason.NOT_COMPARABLE):
        which = first if compare_outcome(first, first, settings) is not None else second
        found = compare_outcome(which, which, settings) if which is not None else None
        return _cut(f"{found.expected} in {found.path or 'the outcome'}") if found else ""
    if problem == DropReason.NONDETERMINISTIC and second is not None:
        differ = compare_outcome(first, second, settings)
        if differ is not None:
            return _cut(f"{differ.path or differ.kind}: {differ.expected}, then {differ.got}")
    return ""


def _cut(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SHOWN else line[: SHOWN - 3] + "..."


def drops_detail(
    drops: Counter[str], examples: Mapping[str, str], of: int, what: str, kept: int
) -> str:
    """What `of` inputs of a kind (`what`) came to: "2 of 5 traced inputs kept;
    nondeterministic outcome on 3 of 5 (return: 1, then 2)": `kept` kept, and every drop
    reason with its count and an instance where one is known, the most common first."""
    parts = [f"{kept} of {of} {what} kept"] if of else [f"no {what}"]
    for problem, n in drops.most_common():
        seen = examples.get(problem, "")
        parts.append(f"{problem} on {n} of {of}" + (f" ({seen})" if seen else ""))
    return "; ".join(parts)


def strength_detail(strength: Strength) -> str:
    """What the mutants did: "kill rate 0.42: 5 of 12 mutants killed (3 by the hidden inputs as
    minted, 2 more by 4 of 300 searched inputs added); 6 survivors likely equivalent"."""
    added = strength.killed - strength.killed_before
    text = (
        f"kill rate {strength.kill_rate:.2f}: {strength.killed} of {strength.mutants} mutants "
        f"killed ({strength.killed_before} by the hidden inputs as minted, {added} more by "
        f"{strength.added_inputs} of {strength.searched_inputs} searched inputs added)"
    )
    if strength.likely_equivalent:
        text += (
            f"; {strength.likely_equivalent} survivors likely equivalent (no searched input "
            "tells them from the reference)"
        )
    return text
