"""The candidate in OpenRLHF's `query`: what follows the prompt (at the start, else its last
occurrence), found by `last_index`, which agrees with `str.rfind` everywhere."""

from __future__ import annotations

import itertools

from replicate.integrations.grading import candidate_from_query, last_index


def test_last_index_agrees_with_rfind() -> None:
    words = ["".join(w) for n in range(4) for w in itertools.product("ab", repeat=n)]
    for text, part in itertools.product([*words, "abab", "aabaa", "baaab"], words):
        assert last_index(text, part) == text.rfind(part), (text, part)


def test_the_candidate_follows_the_prompt() -> None:
    assert candidate_from_query("PROMPT def f(): ...", "PROMPT ") == "def f(): ..."
    assert candidate_from_query("<s>PROMPT body", "PROMPT ") == "body"
    assert candidate_from_query("<s>P1 x P1 y", "P1 ") == "y"
    assert candidate_from_query("no prompt here", "PROMPT") == "no prompt here"
    assert candidate_from_query("all of it", "") == "all of it"
