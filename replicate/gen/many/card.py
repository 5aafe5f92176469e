"""The batch card of a `--repos` minting: `CARD.md` for people, `card.json` for scripts.
Per repository: tasks, yield (validated / extracted), the median kill rate, the tasks per
difficulty band (`replicate.core.difficulty`), the main drop reasons (`replicate.core.DropReason`),
set-up notes, the failure, the licence; then the totals."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from replicate import GRADER_VERSION
from replicate.core import BANDS, Band, summed_reasons
from replicate.gen.many.ledger import RepoOutcome

CARD_MD = "CARD.md"
CARD_JSON = "card.json"
MAIN_REASONS = 5  # drop reasons the card shows over the batch
MAIN_REASONS_EACH = 3  # and per repository (card.json)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RepoLine(_Frozen):
    source: str
    status: Literal["minted", "failed"]
    key: str | None  # the repository's name in the batch, its task ids' prefix
    origin: str | None = None  # what tells it from another repository of that name
    commit: str | None
    tasks: int
    extracted: int
    validated: int
    yield_rate: float | None  # validated / extracted
    kill_rate_median: float | None  # over the tasks that recorded one
    bands: tuple[tuple[str, int], ...] = ()  # (band, tasks) for easy, medium, hard
    setup_notes: tuple[str, ...]
    drops: tuple[tuple[str, int], ...] = ()  # (drop reason, targets), the main ones first
    failure: str | None  # "<stage>: <reason>"
    licence: str | None
    seconds: float


class Totals(_Frozen):
    repositories: int
    minted: int
    failed: int
    tasks: int
    extracted: int
    validated: int
    yield_rate: float | None
    kill_rate_median: float | None
    bands: tuple[tuple[str, int], ...] = ()  # (band, tasks) for easy, medium, hard
    drops: tuple[tuple[str, int], ...] = ()  # (drop reason, targets) over every repository
    seconds: float
    licences: tuple[tuple[str, int], ...]  # licence, repositories; most common first


class BatchCard(_Frozen):
    grader_version: str
    repositories: tuple[RepoLine, ...]
    totals: Totals


def build_card(
    outcomes: Sequence[RepoOutcome], bands: Mapping[str, Band] | None = None
) -> BatchCard:
    """The card of these outcomes; `bands`: each task's difficulty band, by task id."""
    found = bands or {}
    lines = tuple(_line(o, _count(o.tasks, found)) for o in outcomes)
    rates = [rate for o in outcomes for rate in o.kill_rates]
    extracted = sum(o.extracted for o in outcomes)
    validated = sum(o.validated for o in outcomes)
    licences = Counter(line.licence or "not stated" for line in lines if line.status == "minted")
    totals = Totals(
        repositories=len(lines),
        minted=sum(1 for line in lines if line.status == "minted"),
        failed=sum(1 for line in lines if line.status == "failed"),
        tasks=sum(line.tasks for line in lines),
        extracted=extracted,
        validated=validated,
        yield_rate=_ratio(validated, extracted),
        kill_rate_median=_median(rates),
        bands=_count([t for o in outcomes for t in o.tasks], found),
        drops=_reasons([d for o in outcomes for d in o.drops], MAIN_REASONS),
        seconds=round(sum(o.seconds for o in outcomes), 1),
        licences=tuple(sorted(licences.items(), key=lambda item: (-item[1], item[0]))),
    )
    return BatchCard(grader_version=GRADER_VERSION, repositories=lines, totals=totals)


def _count(tasks: Sequence[str], bands: Mapping[str, Band]) -> tuple[tuple[str, int], ...]:
    counts = Counter(bands[t] for t in tasks if t in bands)
    return tuple((name, counts[name]) for name in BANDS) if counts else ()


def _line(outcome: RepoOutcome, bands: tuple[tuple[str, int], ...]) -> RepoLine:
    failure = f"{outcome.stage}: {outcome.reason}" if outcome.status == "failed" else None
    return RepoLine(
        source=outcome.source,
        status=outcome.status,
        key=outcome.key,
        origin=outcome.origin,
        commit=outcome.commit,
        tasks=len(outcome.tasks),
        extracted=outcome.extracted,
        validated=outcome.validated,
        yield_rate=_ratio(outcome.validated, outcome.extracted),
        kill_rate_median=_median(outcome.kill_rates),
        bands=bands,
        setup_notes=outcome.setup_notes,
        drops=_reasons(outcome.drops, MAIN_REASONS_EACH),
        failure=failure,
        licence=outcome.licence,
        seconds=outcome.seconds,
    )


def _reasons(drops: Iterable[tuple[str, int]], most: int) -> tuple[tuple[str, int], ...]:
    """The `most` commonest drop reasons (`DropReason`s' texts) and their counts."""
    return summed_reasons(drops)[:most]


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _median(values: Sequence[float]) -> float | None:
    return round(statistics.median(values), 4) if values else None


def render_markdown(card: BatchCard) -> str:
    t = card.totals
    out = [
        "# Batch card",
        "",
        f"{t.minted} of {t.repositories} repositories minted, {t.failed} failed; "
        f"{t.tasks} tasks; yield {_pct(t.yield_rate)} of {t.extracted} functions extracted; "
        f"median kill rate {_num(t.kill_rate_median)}; {t.seconds:.0f} s of minting; "
        f"grader {card.grader_version}.",
        "",
        "| source | repository | commit | tasks | yield | kill rate (median) | licence | result |",
        "|---|---|---|---:|---:|---:|---|---|",
    ]
    for r in card.repositories:
        result = "minted" if r.failure is None else f"failed ({_cell(r.failure)})"
        out.append(
            f"| {_cell(r.source)} | {_cell(r.key or '-')} | {(r.commit or '')[:12]} | {r.tasks} "
            f"| {_pct(r.yield_rate)} "
            f"| {_num(r.kill_rate_median)} | {_cell(r.licence or 'not stated')} | {result} |"
        )
    out += _bands_markdown(card)
    if t.drops:
        out += ["", "## Why targets dropped (main reasons)", ""]
        out += [f"- {_cell(reason)}: {n}" for reason, n in t.drops]
    out += ["", "## Licences", ""]
    out += [f"- {_cell(name)}: {count}" for name, count in t.licences] or ["- none minted"]
    notes = [(r.source, note) for r in card.repositories for note in r.setup_notes]
    if notes:
        out += ["", "## Set-up notes", ""]
        out += [f"- {_cell(source)}: {_cell(note)}" for source, note in notes]
    return "\n".join(out) + "\n"


def _bands_markdown(card: BatchCard) -> list[str]:
    """Tasks per difficulty band, per repository and in all (nothing when none was measured)."""
    if not card.totals.bands:
        return []
    out = ["", "## Difficulty", "", "| source | " + " | ".join(BANDS) + " |"]
    out.append("|---|" + "---:|" * len(BANDS))
    rows = [(r.source, r.bands) for r in card.repositories if r.bands]
    for source, counts in [*rows, ("all", card.totals.bands)]:
        out.append(f"| {_cell(source)} | " + " | ".join(str(n) for _, n in counts) + " |")
    return out


def write_card(batch: Path, card: BatchCard) -> None:
    (batch / CARD_JSON).write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
    (batch / CARD_MD).write_text(render_markdown(card), encoding="utf-8")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())[:300]
