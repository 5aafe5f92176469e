"""How long an export's prompts are, and the trainer settings that implies (pure).

Tokens are estimated, not counted: `CHARS_PER_TOKEN` characters a token, about what the BPE
tokenizers of code models give on Python source with markdown around it (no tokenizer is
downloaded for this).  The setting suggested for verl's `data.max_prompt_length` leaves
`MARGIN` over the longest prompt's estimate (the estimate's error and the chat template's own
tokens), rounded up to a multiple of `ROUND_TO`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

CHARS_PER_TOKEN = 3.5
MARGIN = 1.25
ROUND_TO = 256
PERCENTILES = (50, 90, 99, 100)


def tokens(chars: int) -> int:
    """The estimated token count of a text of `chars` characters."""
    return math.ceil(chars / CHARS_PER_TOKEN)


def percentile(values: Sequence[int], p: int) -> int:
    """The nearest-rank percentile `p` of `values` (not empty): p100 is the largest."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class PromptLengths:
    """Percentiles of the prompts' lengths, in characters and in estimated tokens."""

    prompts: int
    chars: dict[int, int]
    tokens: dict[int, int]

    @property
    def max_prompt_length(self) -> int:
        """The `data.max_prompt_length` that holds every prompt with the margin above."""
        longest = self.tokens[100] if self.prompts else 0
        return max(ROUND_TO, math.ceil(longest * MARGIN / ROUND_TO) * ROUND_TO)

    def settings(self) -> dict[str, object]:
        """The trainer settings these lengths imply (verl's keys)."""
        return {"data.max_prompt_length": self.max_prompt_length, "data.truncation": "error"}

    def as_json(self) -> dict[str, object]:
        return {
            "prompts": self.prompts,
            "chars": {f"p{p}": v for p, v in self.chars.items()},
            "tokens_estimated": {f"p{p}": v for p, v in self.tokens.items()},
            "chars_per_token": CHARS_PER_TOKEN,
            "settings": self.settings(),
        }


def measure(chars: Sequence[int]) -> PromptLengths:
    """The lengths of prompts of `chars` characters each."""
    if not chars:
        return PromptLengths(0, {p: 0 for p in PERCENTILES}, {p: 0 for p in PERCENTILES})
    by_chars = {p: percentile(chars, p) for p in PERCENTILES}
    return PromptLengths(len(chars), by_chars, {p: tokens(v) for p, v in by_chars.items()})
