"""Minting tasks from one repository (`replicate gen`): prepare, harvest, mint each target, audit
for leaks, publish to the batch, and the funnel of what each stage kept and dropped."""

from __future__ import annotations

from replicate.gen.audit import LeakAudit, audit_leaks, visible_roots
from replicate.gen.ledger import LEDGER
from replicate.gen.many.card import CARD_MD, BatchCard
from replicate.gen.many.driver import ManyOptions, mint_many
from replicate.gen.pipeline import (
    DEFAULT_KINDS,
    MINTED_KINDS,
    GenOptions,
    GenReport,
    mint,
    parse_kinds,
)
from replicate.gen.reasons import (
    Explanation,
    NoLedger,
    NoMatch,
    StageTally,
    explain,
    find,
    outcomes,
    tally,
)
from replicate.gen.strength import (
    DEFAULT_MIN_KILL_RATE,
    MutantRun,
    assess,
    mutant_settings,
    run_mutants,
    task_mutants,
)
from replicate.gen.survivors import Reference, reference_run, search

__all__ = [
    "CARD_MD",
    "DEFAULT_KINDS",
    "DEFAULT_MIN_KILL_RATE",
    "LEDGER",
    "MINTED_KINDS",
    "BatchCard",
    "Explanation",
    "GenOptions",
    "GenReport",
    "LeakAudit",
    "ManyOptions",
    "MutantRun",
    "NoLedger",
    "NoMatch",
    "Reference",
    "StageTally",
    "assess",
    "audit_leaks",
    "explain",
    "find",
    "mint",
    "mint_many",
    "mutant_settings",
    "outcomes",
    "parse_kinds",
    "reference_run",
    "run_mutants",
    "search",
    "tally",
    "task_mutants",
    "visible_roots",
]
