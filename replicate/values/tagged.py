"""One tagged node read by the reader its tag names: the dispatch both languages' values share
(`plain` for Python's, `javascript` for JavaScript's), with their depth bound and error type."""

from __future__ import annotations

import binascii
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")
Reader = Callable[[Mapping[str, Any], int], T]


def read_node(
    node: Any,
    depth: int,
    readers: Mapping[str, Reader[T]],
    *,
    max_depth: int,
    error: type[ValueError],
) -> T:
    """`readers[node["t"]](node, depth + 1)`; `error` (one line) for a node too deep, of no
    known tag, or whose reader fails on its shape."""
    if depth > max_depth or not isinstance(node, Mapping):
        raise error("too deep or malformed")
    tag = node.get("t")
    reader = readers.get(tag) if isinstance(tag, str) else None
    if reader is None:
        raise error(f"unknown tag {tag!r}")
    try:
        return reader(node, depth + 1)
    except error:
        raise
    except (TypeError, ValueError, KeyError, IndexError, OverflowError, binascii.Error) as exc:
        raise error(f"malformed {tag} node: {exc}") from None
