"""Shared unit-test fixtures: defined in tests/unit/minted.py, imported here so pytest sees them."""

from __future__ import annotations

from tests.unit.minted import local_sandbox, tiny, tiny_ctx, tiny_task

__all__ = ["local_sandbox", "tiny", "tiny_ctx", "tiny_task"]
