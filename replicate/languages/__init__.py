"""Language adapters, looked up by name in a lazy registry (nothing is imported until asked)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from replicate.errors import ReplicateError
from replicate.languages.base import Extraction, Language

if TYPE_CHECKING:
    from replicate.languages.javascript_detect import Detection

# name -> "module:attribute" of a zero-argument factory (a class or function) building the adapter.
_REGISTRY: dict[str, str] = {
    "javascript": "replicate.languages.javascript:javascript_language",
    "python": "replicate.languages.python:PythonLanguage",
    "typescript": "replicate.languages.javascript:typescript_language",
}

__all__ = ["Extraction", "Language", "available_languages", "detect_language", "get_language"]


def available_languages() -> tuple[str, ...]:
    """Names accepted by `get_language`, sorted."""
    return tuple(sorted(_REGISTRY))


def get_language(name: str) -> Language:
    """A fresh adapter for `name`; a `ReplicateError` naming the choices for an unknown name."""
    ref = _REGISTRY.get(name)
    if ref is None:
        choices = ", ".join(available_languages())
        raise ReplicateError(f"unknown language {name!r}; choose one of: {choices}")
    module_name, _, attribute = ref.partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    adapter: Language = factory()
    return adapter


def detect_language(root: Path) -> Detection | None:
    """The JavaScript/TypeScript language and test runner of the tree at `root`, read statically;
    None for any other tree (Python is the default: `replicate.languages.javascript_detect`)."""
    from replicate.languages.javascript_detect import detect_language as detect

    return detect(root)
