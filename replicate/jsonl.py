"""JSON Lines, read and written one way everywhere.

A JSONL file is JSON texts each followed by "\\n", and only "\\n" separates them. A JSON string
holds no raw character below U+0020, but may hold U+0085, U+2028 and U+2029 raw (pydantic writes
them so, as `json.dumps` does without `ensure_ascii`), and `str.splitlines` breaks at those too.
Reading a file by `splitlines` cut such a line in two; every JSONL file of the project (a
batch's inputs and expected outcomes, results.jsonl, the gen ledgers, the exported rows, the
harvest's records) is split here instead.

pydantic can neither write nor read a lone surrogate (JSON allows one as an escape, `"\\ud800"`):
`model_line` then falls back on `json.dumps`, which escapes it, and `parse_model` reads such a
line through `json.loads`; `text` escapes one where non-ASCII is otherwise written raw (also
for the JSON documents beside the JSONL files, a built-in agent's transcripts).
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

Model = TypeVar("Model", bound=BaseModel)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def split(text: str) -> list[str]:
    """The lines of `text`: split at "\\n" only, a "\\r" before it dropped; the empty piece after
    a final newline is not a line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def line(text: str) -> str:
    """One line of JSONL from JSON text already written (it must hold no newline)."""
    if "\n" in text or "\r" in text:
        raise ValueError("a JSON Lines line holds a raw newline")
    return text + "\n"


def text(value: Any, **options: Any) -> str:
    """`json.dumps(value, **options)`; with `ensure_ascii=False`, a text UTF-8 cannot carry (a
    lone surrogate) is written with every non-ASCII character escaped instead."""
    found = json.dumps(value, **options)
    if not options.get("ensure_ascii", True):
        try:
            found.encode("utf-8")
        except UnicodeEncodeError:
            found = json.dumps(value, **{**options, "ensure_ascii": True})
    return found


def dumps(value: Any, **options: Any) -> str:
    """`value` as one line of JSONL (`text` with `options`, and the newline)."""
    return line(text(value, **options))


def model_line(model: BaseModel) -> str:
    """A pydantic model as one line of JSONL, in pydantic's compact form."""
    try:
        return line(model.model_dump_json())
    except PydanticSerializationError:  # a lone surrogate: pydantic cannot encode it
        return dumps(model.model_dump(mode="json"), separators=(",", ":"))


def parse_model(model: type[Model], text: str) -> Model:
    """One line read as `model`; ValidationError when it is not one."""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        if not _SURROGATE_ESCAPE.search(text):
            raise
        try:
            value = json.loads(text)  # reads the escapes of surrogates pydantic refuses
        except ValueError:
            raise exc from None
        return model.model_validate(value)
