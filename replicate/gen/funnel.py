"""Counting what each gen stage keeps and why it drops the rest (pure)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from replicate.core import Funnel, FunnelStage, LedgerEntry, SkippedFile

STAGES = ("extracted", "traced", "encodable", "deterministic", "validated")


def stage_before(stage: str) -> str:
    """The furthest stage that kept a target a later `stage` dropped."""
    return STAGES[STAGES.index(stage) - 1]


@dataclass
class FunnelCounter:
    """Mutable tally used while minting; frozen into a `Funnel` record at the end."""

    counts: Counter[str] = field(default_factory=Counter)
    drops: dict[str, Counter[str]] = field(default_factory=lambda: {s: Counter() for s in STAGES})

    def keep(self, stage: str, n: int = 1) -> None:
        self.counts[stage] += n

    def drop(self, stage: str, reason: str, n: int = 1) -> None:
        self.drops[stage][reason] += n

    def replay(self, entry: LedgerEntry) -> None:
        """Count one target's outcome: kept by every stage after extraction up to `entry.stage`
        (extraction is counted for all targets at once), dropped by the next one unless kept."""
        reached = STAGES.index(entry.stage)
        for stage in STAGES[1 : reached + 1]:
            self.keep(stage)
        if not entry.kept:
            self.drop(STAGES[reached + 1], entry.reason)

    def freeze(
        self,
        repo: str,
        commit: str,
        skipped: tuple[SkippedFile, ...],
        duration_s: float,
        notes: tuple[str, ...],
    ) -> Funnel:
        stages = tuple(
            FunnelStage(
                stage=s,
                count=self.counts[s],
                drops=tuple(self.drops[s].most_common(5)),
            )
            for s in STAGES
        )
        return Funnel(
            repo=repo,
            commit=commit,
            stages=stages,
            skipped_files=skipped,
            duration_s=round(duration_s, 2),
            setup_notes=notes,
        )
