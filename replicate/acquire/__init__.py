"""Acquire a repository at a pinned commit (clone, local read, or plain-folder snapshot)."""

from __future__ import annotations

from replicate.acquire.export import export_tree
from replicate.acquire.git import AcquiredRepo, acquire

__all__ = ["AcquiredRepo", "acquire", "export_tree"]
