"""Why a target did or did not become a task, read from a batch's ledger (`funnel.jsonl`).

`outcomes` takes each repository's latest `gen` run (the key of its last ledger line: commit,
grader version, strength threshold) and each target's latest line under it; `find` picks one
target by a dotted name, exact or the only one that ends with it or holds it; `explain` says
where a target stopped; `tally` counts every drop reason per stage, as the gen funnel does.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate.batch import HIDDEN, SPECS
from replicate.core import LedgerEntry, name_problem
from replicate.gen.funnel import STAGES, FunnelCounter
from replicate.gen.ledger import LEDGER, read_entries

CLOSE = 3  # close names offered when nothing matches
LISTED = 10  # names listed when several match


class NoLedger(Exception):
    """The batch holds no ledger (minted before `gen` kept one, or not a batch)."""


class NoMatch(Exception):
    """No target, or several, answer to the name asked for (the message says which)."""


def outcomes(batch: Path) -> list[LedgerEntry]:
    """The targets' outcomes in the batch's latest `gen` run of each repository, in ledger
    order; NoLedger when there is no ledger, or nothing in it."""
    if not (batch / LEDGER).is_file():
        raise NoLedger(f"{batch} has no {LEDGER}")
    entries = read_entries(batch)
    last = {e.repo: (e.commit, e.grader_version, e.min_kill_rate) for e in entries}
    latest: dict[tuple[str, str], LedgerEntry] = {}
    for entry in entries:
        if (entry.commit, entry.grader_version, entry.min_kill_rate) == last[entry.repo]:
            latest.pop((entry.repo, entry.symbol), None)
            latest[(entry.repo, entry.symbol)] = entry
    if not latest:
        raise NoLedger(f"{batch / LEDGER} records no target")
    return list(latest.values())


def find(entries: Sequence[LedgerEntry], name: str) -> LedgerEntry:
    """The one entry `name` picks: of exactly that symbol, else the one whose symbol ends with
    it as dotted parts, else the one that holds it; NoMatch when none does or several do."""
    for picks in (_exact, _suffix, _substring):
        found = [e for e in entries if picks(e.symbol, name)]
        if len(found) == 1:
            return found[0]
        if found:
            raise NoMatch(_several(name, found))
    raise NoMatch(_none(name, entries))


def _exact(symbol: str, name: str) -> bool:
    return symbol == name


def _suffix(symbol: str, name: str) -> bool:
    return symbol.endswith("." + name.lstrip("."))


def _substring(symbol: str, name: str) -> bool:
    return name.lower() in symbol.lower()


def _label(entry: LedgerEntry, entries: Sequence[LedgerEntry]) -> str:
    return entry.symbol if len({e.repo for e in entries}) == 1 else f"{entry.repo}:{entry.symbol}"


def _several(name: str, found: Sequence[LedgerEntry]) -> str:
    shown = ", ".join(_label(e, found) for e in found[:LISTED])
    more = f" and {len(found) - LISTED} more" if len(found) > LISTED else ""
    return f"{name!r} matches {len(found)} targets: {shown}{more}; give more of the dotted name"


def _none(name: str, entries: Sequence[LedgerEntry]) -> str:
    symbols = sorted({e.symbol for e in entries})
    tails = {s.rsplit(".", 1)[-1]: s for s in symbols}
    close = difflib.get_close_matches(name, symbols, n=CLOSE, cutoff=0.5)
    close += [tails[t] for t in difflib.get_close_matches(name, list(tails), n=CLOSE)]
    unique = list(dict.fromkeys(close))[:CLOSE]
    hint = f"; close: {', '.join(unique)}" if unique else ""
    return f"no target of the batch matches {name!r} ({len(symbols)} targets){hint}"


@dataclass(frozen=True)
class Explanation:
    """Where one target stopped: the furthest stage that kept it, the stage that dropped it
    (None: it became a task), why, and a minted task's folders (None when they are gone)."""

    entry: LedgerEntry
    dropped_at: str | None
    spec_dir: Path | None
    hidden_dir: Path | None


def explain(batch: Path, entry: LedgerEntry) -> Explanation:
    if not entry.kept or not entry.task_id:
        dropped_at = STAGES[min(STAGES.index(entry.stage) + 1, len(STAGES) - 1)]
        return Explanation(entry, dropped_at, None, None)
    if name_problem(entry.task_id):  # the ledger is the batch's: no folder by such a name
        return Explanation(entry, None, None, None)
    spec, hidden = batch / SPECS / entry.task_id, batch / HIDDEN / entry.task_id
    return Explanation(
        entry, None, spec if spec.is_dir() else None, hidden if hidden.is_dir() else None
    )


@dataclass(frozen=True)
class StageTally:
    """One funnel stage: the targets it kept, and every reason it dropped others for."""

    stage: str
    kept: int
    drops: tuple[tuple[str, int], ...]  # most first


def tally(entries: Sequence[LedgerEntry]) -> tuple[StageTally, ...]:
    """Per stage, the targets kept and every drop reason with its count (the gen funnel's
    counting, all reasons kept)."""
    counter = FunnelCounter()
    counter.keep(STAGES[0], len(entries))
    for entry in entries:
        counter.replay(entry)
    return tuple(
        StageTally(stage, counter.counts[stage], tuple(counter.drops[stage].most_common()))
        for stage in STAGES
    )
