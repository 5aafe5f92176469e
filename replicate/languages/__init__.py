"""Language adapters, looked up by name in a lazy registry (nothing is imported until asked)."""

from __future__ import annotations

import importlib

from replicate.errors import ReplicateError
from replicate.languages.base import Extraction, Language

# name -> "module:attribute" of a zero-argument factory (a class) building the adapter.
_REGISTRY: dict[str, str] = {
    "python": "replicate.languages.python:PythonLanguage",
}

__all__ = ["Extraction", "Language", "available_languages", "get_language"]


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
