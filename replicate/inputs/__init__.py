"""A target's hidden inputs beyond the traced calls: widened, mutated and edge values.

Pure: no subprocess, no network. `widen` draws them from the traced calls' seeds with the
strategies, mutations, recipes and relations beside it; `renamings` gives one string of a
traced call a fresh name throughout its pickle; `cut_down` cuts a call whose outcome is too large
to its first half, quarter and eighth; `widen_sequences` draws new call sequences on a class
from its recorded ones.
"""

from __future__ import annotations

from replicate.inputs.recipes import recipe_b64, with_replacements
from replicate.inputs.renaming import renamings
from replicate.inputs.selves import other_selves, seeds_among
from replicate.inputs.signature import ParamSlot, parse, parse_signature
from replicate.inputs.stateful import StatefulBudget, widen_sequences
from replicate.inputs.truncation import cut_down
from replicate.inputs.widening import Budget, Seed, render_call, widen

__all__ = [
    "Budget",
    "ParamSlot",
    "Seed",
    "StatefulBudget",
    "cut_down",
    "other_selves",
    "parse",
    "parse_signature",
    "recipe_b64",
    "renamings",
    "render_call",
    "seeds_among",
    "widen",
    "widen_sequences",
    "with_replacements",
]
