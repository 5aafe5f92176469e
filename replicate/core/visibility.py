"""Which tasks' hidden bodies a text shows (pure): the search behind a row's `visible_task_ids`.

A body is found when its text, whitespace normalised (every run of whitespace one space, so
indentation and line breaks do not matter), occurs in the text normalised the same way, not
inside a longer name (the characters on both sides of the match are not part of an identifier).
Bodies are looked up by their first `ANCHOR` characters at every position of the text, so one
pass over a text serves every body of a batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

ANCHOR = 16


def normalise(text: str) -> str:
    """Every run of whitespace one space, none at the ends."""
    return " ".join(text.split())


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _bounded(text: str, at: int, length: int) -> bool:
    """The match `text[at:at+length]` does not begin or end inside a longer name."""
    before = text[at - 1] if at > 0 else " "
    after = text[at + length] if at + length < len(text) else " "
    inner_first, inner_last = text[at], text[at + length - 1]
    return not (_is_word(before) and _is_word(inner_first)) and not (
        _is_word(after) and _is_word(inner_last)
    )


def occurs(body: str, text: str) -> bool:
    """`body` (normalised) occurs in `text` (normalised), bounded as above."""
    at = text.find(body)
    while at >= 0:
        if _bounded(text, at, len(body)):
            return True
        at = text.find(body, at + 1)
    return False


class BodyIndex:
    """The normalised hidden bodies of a batch's tasks, by task id. A task may hide several
    bodies (a class task: each of its members'); it is shown when any of them is."""

    def __init__(self, bodies: Mapping[str, str | Sequence[str]]) -> None:
        self.bodies = {
            task_id: tuple(normalise(b) for b in ((body,) if isinstance(body, str) else body))
            for task_id, body in bodies.items()
        }
        self._anchored: dict[str, list[tuple[str, str]]] = {}
        self._short: list[tuple[str, str]] = []
        for task_id, hidden in sorted(self.bodies.items()):
            for body in hidden:
                if len(body) >= ANCHOR:
                    self._anchored.setdefault(body[:ANCHOR], []).append((task_id, body))
                elif body:
                    self._short.append((task_id, body))

    def found_in(self, text: str) -> frozenset[str]:
        """The ids of the tasks whose bodies (one is enough) `text` shows (normalised here)."""
        flat = normalise(text)
        candidates = {pair for pair in self._short if pair[1] in flat}
        anchored = self._anchored
        for at in range(len(flat) - ANCHOR + 1):
            pairs = anchored.get(flat[at : at + ANCHOR])
            if pairs:
                candidates.update(pairs)
        return frozenset(task_id for task_id, body in candidates if occurs(body, flat))

    def visible(self, texts: Iterable[str], own: str) -> tuple[str, ...]:
        """The ids, `own` left out, of the bodies any of `texts` shows, sorted."""
        found: set[str] = set()
        for text in texts:
            found |= self.found_in(text)
        return tuple(sorted(found - {own}))
