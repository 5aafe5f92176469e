"""Acquire a repository at a pinned commit (clone, local read, or plain-folder snapshot), and
name it (`naming`)."""

from __future__ import annotations

from replicate.acquire.export import export_tree
from replicate.acquire.git import AcquiredRepo, acquire
from replicate.acquire.naming import suffix
from replicate.acquire.npm import is_npm_spec, parse_npm_pin
from replicate.acquire.pypi import is_pypi_spec, parse_pin
from replicate.acquire.remote import is_remote_spec

__all__ = [
    "AcquiredRepo",
    "acquire",
    "annotations",
    "export_tree",
    "is_npm_spec",
    "is_pypi_spec",
    "is_remote_spec",
    "parse_npm_pin",
    "parse_pin",
    "suffix",
]
