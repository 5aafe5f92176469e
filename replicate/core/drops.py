"""Why minting drops a target or one of its inputs: the closed set of reasons (pure).

A reason's text, as the ledger (`funnel.jsonl`) and the funnel table hold it, is one member's
text: its value with each `{}` filled (`DropReason.says`), maybe followed by a qualifier,
": <what>" or " (<what>)" (the error, the input reason that cost the most, the test). The funnel
counts texts as they are, so a qualifier splits a group on purpose; a typo cannot, since gen's
own texts are made from members and a dropped target's is checked (`gen.target.Dropped`,
`checked_reason`). `DropReason.of` reads a text back to its member. A text no member names reads
as `UNKNOWN` and is kept as written, never rewritten: a batch minted by an older version, or a
harvest's text (the shipped plugin writes its reasons itself, standard library only, so a
repository's tests could write others; they are reported, not refused).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from enum import StrEnum
from functools import cache

QUALIFIERS = (": ", " (")  # what may follow a member's text: the words behind it


class DropReason(StrEnum):
    """Every reason a gen drops a target (the funnel's groups) or one of its inputs (counted
    into a target's detail, the most common one into its reason)."""

    # traced: what the harvest saw (its shipped plugin writes these texts itself)
    MODULE_DOES_NOT_IMPORT = "module does not import"  # ": <the error>"
    CLASS_NOT_FOUND = "enclosing class not found"
    TESTS_DID_NOT_START = "the repository's tests did not start"
    NOT_CALLED = "not called by the tests"
    ARGUMENT_TOO_LARGE = "argument too large"
    ARGUMENT_DOES_NOT_PICKLE = "argument does not pickle"  # ": <which argument>"
    NOT_DEFINED = "not defined at import"
    NOT_CALLABLE = "not callable"  # " (<its type>)"
    NOT_DEFINED_IN_CLASS = "not defined in class at import"
    UNEXPECTED_CLASS_ATTRIBUTE = "unexpected class attribute"  # " (<its type>)"
    # a JavaScript/TypeScript target (gen/javascript.py)
    NOT_REACHABLE = "not reachable by the Node runner"  # ": <why>"
    # one input, in the golden runs
    HANGS_OR_CRASHES = "reference hangs or crashes the process"
    INPUT_DOES_NOT_LOAD = "input does not load in the jail"
    HANGS = "reference hangs"
    NOT_COMPARABLE = "outcome not comparable"
    NONDETERMINISTIC = "nondeterministic outcome"
    TOO_SLOW = "reference too slow"
    BLOWS_UP = "reference blows up (recursion, memory)"
    OUTCOME_TOO_LARGE = "outcome too large for a generated input"
    GENERATION_FAILED = "input generation failed"  # ": <the exception's type>"
    NAMES_BATCH_FOLDER = "outcome names the folder the batch keeps the repository in"
    TOO_LARGE_FOR_TASK = "outcome too large for the task"
    TOO_SLOW_FOR_TASK = "reference too slow for the task"
    # encodable: the golden runs as a whole
    REFERENCE_DOES_NOT_IMPORT = "reference does not import"
    RUNNER_DID_NOT_START = "runner did not start in the sandbox"  # ": <its stderr's last line>"
    NO_INPUT_SURVIVES = "no input survives"
    # deterministic: too few inputs left (" (most dropped: <the input reason>)")
    TOO_FEW_TRACED = "fewer than 3 traced calls"
    TOO_FEW_DETERMINISTIC = "fewer than 3 deterministic inputs"
    TOO_FEW_GENERATED = "fewer than 5 generated inputs survive"
    # validated: grading the reference, its mutants and the degenerate programs
    REFERENCE_NOT_GRADABLE = "reference cannot be graded"
    REFERENCE_FAILS_HIDDEN = "reference fails its hidden inputs when graded"
    STRENGTH_RUN_FAILED = "strength: reference run failed"  # ": <the infrastructure's trouble>"
    KILL_RATE_BELOW = "mutant kill rate below {}"
    SPARSE_UNVOUCHED = "fewer than 3 traced calls, generated inputs"  # ": <why>"
    DEGENERATE_ORIGINAL = "the original is a degenerate program"
    DEGENERATE_AT_FLOOR = "a degenerate program ({}) scores {} or more"
    DEGENERATE_OVERPAID = "a degenerate program ({}) earns more than {} normalised"
    SEARCH_FAILED = "baseline search"  # ": <the infrastructure's trouble>"
    SEARCHED_MISS = "the reference misses searched inputs run with the others"
    # a class task, from its methods' tasks (gen/classes.py)
    CLASS_TOO_FEW_MEMBERS = "fewer than {} of its methods minted as method tasks"
    REFERENCE_CLASS_MISSES = "the reference class misses its methods' inputs"
    STUB_CLASS_EARNS = "the stubbed class earns a reward"
    STUB_EARNS = "the stub earns a reward"  # a JavaScript task's stub matches an input
    DEGENERATE_CLASS_AT_FLOOR = "a degenerate class ({}) scores {} or more"
    DEGENERATE_CLASS_NOT_RUN = "a degenerate class could not be run"  # ": <the trouble>"
    # a module task, from its file's function and method tasks (gen/modules.py)
    MODULE_TOO_FEW_MEMBERS = "fewer than {} of its functions and methods minted as tasks"
    REFERENCE_MODULE_MISSES = "the reference module misses its members' inputs"
    STUB_MODULE_EARNS = "the stubbed module earns a reward"
    DEGENERATE_MODULE_AT_FLOOR = "a degenerate module ({}) scores {} or more"
    LEAKED = "reference body visible to the agent in {}"  # the leak audit (gen/audit.py)
    TASK_FILES_NOT_WRITTEN = "task files could not be written"
    TASK_FILES_NOT_READ_BACK = "task files could not be read back"
    # counted by the funnel only, never in the ledger: targets this run did not get to
    LIMIT_REACHED = "not processed (--limit reached)"
    TIME_BUDGET_REACHED = "not started (time budget reached)"
    # read back only: a text no member names (a batch of an older version)
    UNKNOWN = "(a reason this version does not know)"

    def says(self, *parts: object) -> str:
        """This reason's text with its `{}` filled by `parts`, in order."""
        if self.value.count("{}") != len(parts):
            raise ValueError(f"{self.name} takes {self.value.count('{}')} parts, not {len(parts)}")
        return self.value.format(*parts)

    @classmethod
    def of(cls, text: str) -> DropReason:
        """The member `text` was made from (its qualifier aside), else `UNKNOWN`."""
        for member, pattern in _patterns():
            if pattern.fullmatch(text):
                return member
        return cls.UNKNOWN


@cache
def _patterns() -> tuple[tuple[DropReason, re.Pattern[str]], ...]:
    """Each member's text as a pattern, the longest first (a member whose text begins another's,
    like "reference hangs", is tried after it)."""
    tail = "(?:(?:" + "|".join(re.escape(q) for q in QUALIFIERS) + ").*)?"
    found = []
    for member in DropReason:
        if member is DropReason.UNKNOWN:
            continue
        words = ".+?".join(re.escape(part) for part in member.value.split("{}"))
        found.append((member, re.compile(words + tail, re.DOTALL)))
    return tuple(sorted(found, key=lambda pair: -len(pair[0].value)))


def by_reason(drops: Iterable[tuple[str, int]]) -> tuple[tuple[DropReason, int], ...]:
    """Counts of reason texts (a funnel's) summed per member, the most first (then by text)."""
    counts: Counter[DropReason] = Counter()
    for text, n in drops:
        counts[DropReason.of(text)] += n
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0].value)))


def summed_reasons(drops: Iterable[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """`by_reason`, each member named by its text; one with parts filled in (`mutant kill rate
    below {}`) by the one text all its drops share (`... below 0.50`), else with "…" for each
    part: never a bare template (a card once read "fewer than {} of its methods minted")."""
    drops = list(drops)
    texts: dict[DropReason, set[str]] = {}
    for text, _ in drops:
        texts.setdefault(DropReason.of(text), set()).add(text.replace("{}", "…"))
    return tuple((_one_text(member, texts[member]), n) for member, n in by_reason(drops))


def _one_text(member: DropReason, texts: set[str]) -> str:
    if "{}" not in member.value:
        return member.value  # its qualifiers (`: why`, `(most dropped: ...)`) left out
    return next(iter(texts)) if len(texts) == 1 else member.value.replace("{}", "…")


def checked_reason(text: str) -> str:
    """`text`, if it is a drop reason's ('' too: a kept target has none); else ValueError, which
    is a bug of the code that made it (`DropReason.says` makes them)."""
    if text and DropReason.of(text) is DropReason.UNKNOWN:
        raise ValueError(f"not a DropReason's text: {text!r}")
    return text
