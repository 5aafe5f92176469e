"""The runner's tagged values as the trusted side reads them (pure, no I/O).

`plain` decodes them to Python values and encodes them back; `render` writes short Python-like text.
"""

from __future__ import annotations

from replicate.values.plain import Items, canonical
from replicate.values.rendering import (
    UNVERIFIED,
    render,
    render_call,
    render_exception,
    render_outcome,
)

__all__ = [
    "UNVERIFIED",
    "Items",
    "canonical",
    "render",
    "render_call",
    "render_exception",
    "render_outcome",
]
