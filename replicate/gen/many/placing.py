"""Where each pinned source of a `--repos` file goes in the batch: its repository key, and what
of the batch minting it replaces.

A repository's key is the name it gives itself (`acquire.naming`); a second repository of the
same name (another identity: remote, root commit, folder) gets the name with a short suffix of
its identity, its ids then distinct. The keys the batch's ledger already holds keep their owners,
so a rerun names every repository as before. Two lines of one repository at one commit mint it
once (the second is a set-up failure); at two commits they sit beside each other, each line's
tasks replacing only that line's earlier minting, unless `--replace` is given: then the batch
holds one commit per repository, the last line's, and the earlier lines are set-up failures."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from replicate.acquire import suffix
from replicate.gen.many.ledger import RepoOutcome
from replicate.gen.many.pin import Pinned
from replicate.gen.many.sources import Source


@dataclass(frozen=True)
class Placed:
    """A source to mint (or to skip, when the batch holds it already) as repository `key`;
    `drop`: the commits of `key` its minting replaces in the batch (None: every commit)."""

    source: Source
    pinned: Pinned
    key: str
    drop: tuple[str, ...] | None


@dataclass(frozen=True)
class Refused:
    source: Source
    reason: str


def place(
    pinned: Sequence[tuple[Source, Pinned]],
    ledger: Mapping[str, RepoOutcome],
    replace: bool,
) -> list[Placed | Refused]:
    """Each pinned source placed or refused, in order."""
    owners = _owners(ledger.values())
    keyed = [(source, pin, _claim(owners, pin)) for source, pin in pinned]
    first: dict[tuple[str, str], Source] = {}  # the line that mints a repository at a commit
    for source, pin, key in keyed:
        first.setdefault((key, pin.commit), source)
    last = {key: s for s, p, key in keyed if first[key, p.commit] is s}  # --replace keeps it
    placed: list[Placed | Refused] = []
    for source, pin, key in keyed:
        twin = first[key, pin.commit]
        if twin is not source:
            placed.append(Refused(source, f"{key} is already minted from {twin.text}"))
        elif replace and last[key] is not source:
            why = f"replaced by {last[key].text} (--replace: one commit per repository)"
            placed.append(Refused(source, why))
        else:
            drop = None if replace else _own_commits(ledger.get(source.text), key, pin, keyed)
            placed.append(Placed(source, pin, key, drop))
    return placed


def _owners(outcomes: Iterable[RepoOutcome]) -> dict[str, str]:
    """Repository key -> identity, for the repositories the batch's ledger says are minted."""
    return {
        o.key: o.origin
        for o in outcomes
        if o.status == "minted" and o.key is not None and o.origin is not None
    }


def _claim(owners: dict[str, str], pin: Pinned) -> str:
    """The key of `pin`'s repository: its name, else its name and a suffix of its identity."""
    key = pin.key
    if owners.setdefault(key, pin.origin) != pin.origin:
        key = f"{pin.key}-{suffix(pin.origin)}"
        owners.setdefault(key, pin.origin)
    return key


def _own_commits(
    previous: RepoOutcome | None,
    key: str,
    pin: Pinned,
    keyed: Sequence[tuple[Source, Pinned, str]],
) -> tuple[str, ...]:
    """The commit this line mints, and the one it minted before (unless another line of this
    file mints that one): what its minting replaces."""
    commits = {pin.commit}
    if previous is not None and previous.key == key and previous.commit is not None:
        others = {p.commit for _, p, k in keyed if k == key and p is not pin}
        if previous.commit not in others:
            commits.add(previous.commit)
    return tuple(sorted(commits))
