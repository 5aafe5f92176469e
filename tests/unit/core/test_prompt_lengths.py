"""The prompt-length figures `export` prints, and the verl settings they imply."""

from __future__ import annotations

from replicate.core.prompt_lengths import measure, percentile, tokens


def test_percentiles_tokens_and_settings() -> None:
    chars = list(range(100, 10_100, 100))  # 100 prompts, 100 .. 10,000 characters
    assert percentile(chars, 50) == 5_000 and percentile(chars, 100) == 10_000
    measured = measure(chars)
    assert measured.prompts == 100 and measured.chars[99] == 9_900
    assert measured.tokens[100] == tokens(10_000) == 2_858  # 10,000 / 3.5, rounded up
    settings = measured.settings()
    assert settings["data.truncation"] == "error"
    length = settings["data.max_prompt_length"]
    assert isinstance(length, int) and length % 256 == 0 and length >= 2_858 * 1.25
    assert measured.as_json()["tokens_estimated"] == {
        "p50": 1429,
        "p90": 2572,
        "p99": 2829,
        "p100": 2858,
    }


def test_no_prompts() -> None:
    assert measure([]).prompts == 0 and measure([]).max_prompt_length == 256
