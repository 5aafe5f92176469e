"""The copy ratio: how much of a body is a copy of a function the agent can see."""

from __future__ import annotations

from replicate.core.copying import RUN, CopyIndex, target_tokens, visible_in

FILE = '''
def spread(values, width):
    """Pad each value to width, centred, and join them."""
    out = []
    for value in values:
        text = str(value)
        gap = max(0, width - len(text))
        out.append(" " * (gap // 2) + text + " " * (gap - gap // 2))
    return "|".join(out)


def spread_right(values, width):
    """The same, right-aligned: a copy of spread with one line changed."""
    out = []
    for value in values:
        text = str(value)
        gap = max(0, width - len(text))
        out.append(" " * gap + text)
    return "|".join(out)


def checksum(data):
    """Written from scratch: shares only idioms with the rest of the file."""
    total = 0
    for position, byte in enumerate(data):
        total = (total * 31 + byte ^ position) & 0xFFFFFFFF
    return total
'''


def _lines(name: str) -> range:
    line = next(i for i, text in enumerate(FILE.splitlines(), 1) if text.startswith(f"def {name}"))
    return range(line, line + 1)


def test_a_body_that_copies_a_visible_function_scores_high_and_names_it() -> None:
    index = CopyIndex(visible_in("m.py", FILE))
    own = _lines("spread_right")
    found = index.best(target_tokens(FILE, "spread_right", own), skip=("m.py", own))
    assert found.ratio >= 0.8
    assert found.of is not None and found.of.endswith(" spread")


def test_an_original_body_scores_low() -> None:  # the positive control of the test above
    index = CopyIndex(visible_in("m.py", FILE))
    own = _lines("checksum")
    found = index.best(target_tokens(FILE, "checksum", own), skip=("m.py", own))
    assert found.ratio < 0.3


def test_the_body_itself_is_not_counted_as_visible() -> None:
    index = CopyIndex(visible_in("m.py", FILE))
    own = _lines("checksum")
    tokens = target_tokens(FILE, "checksum", own)
    assert index.best(tokens).ratio == 1.0  # without the skip it finds itself
    assert index.best(tokens, skip=("m.py", own)).ratio < 1.0


def test_formatting_comments_and_docstrings_do_not_count() -> None:
    reformatted = (
        "def spread(values,width):\n"
        "    'another docstring'\n"
        "    out=[]  # a comment\n"
        "    for value in values:\n"
        "        text=str(value); gap=max(0,width-len(text))\n"
        "        out.append(' '*(gap//2)+text+' '*(gap-gap//2))\n"
        "    return '|'.join(out)\n"
    )
    index = CopyIndex(visible_in("m.py", FILE))
    found = index.best(target_tokens(reformatted, "spread", range(1, 2)))
    assert found.ratio == 1.0


def test_a_body_shorter_than_a_run_scores_zero() -> None:
    short = "def f(x):\n    return x\n"
    tokens = target_tokens(short, "f", range(1, 2))
    assert len(tokens) < RUN
    assert CopyIndex(visible_in("m.py", short)).best(tokens).ratio == 0.0
