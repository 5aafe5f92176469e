"""The candidate in OpenRLHF's `query`: what follows the prompt (at the start, else where the
longest tail of the prompt the query holds ends), `replicate.core.response_of_query`."""

from __future__ import annotations

from replicate.core import response_of_query


def test_the_candidate_follows_the_prompt() -> None:
    assert response_of_query("PROMPT def f(): ...", "PROMPT ") == "def f(): ..."
    assert response_of_query("<s>PROMPT body", "PROMPT ") == "body"
    assert response_of_query("<s>P1 x P1 y", "P1 ") == "x P1 y"  # the response may echo it
    assert response_of_query("no prompt here", "PROMPT") == "no prompt here"
    assert response_of_query("all of it", "") == "all of it"


def test_a_hostile_pair_is_searched_in_linear_time() -> None:
    """`str.rfind` is quadratic on this pair (a 300 KB query took seconds): the search from the
    front is not. Not a timing test: the answer is right, and the suite would stall if not."""
    half = "a" * 50_000
    assert response_of_query("a" * 200_000, f"{half}b{half}") == "a" * 150_000
