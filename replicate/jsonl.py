"""JSON Lines, read and written one way everywhere.

A JSONL file is JSON texts each followed by "\\n", and only "\\n" separates them: JSON escapes
every control character inside a string, but not U+0085, U+2028, U+2029 or the other characters
`str.splitlines` also breaks at, which a JSON writer may leave raw in a string (pydantic does).
Reading a file by `splitlines` cut such a line in two; every JSONL file of the project (a
batch's inputs and expected outcomes, results.jsonl, the gen ledgers, the exported rows, the
harvest's records) is split here instead.

pydantic can neither write nor read a lone surrogate (JSON allows one as an escape, `"\\ud800"`):
`model_line` then falls back on `json.dumps`, which escapes it, and `parse_model` reads such a
line through `json.loads`.
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


def dumps(value: Any, **options: Any) -> str:
    """`value` as one line of JSONL (`json.dumps` with `options`, and the newline)."""
    return line(json.dumps(value, **options))


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
