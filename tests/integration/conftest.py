"""Integration fixtures (tests/integration/minted.py), imported here so pytest sees them."""

from __future__ import annotations

from tests.integration.minted import local_sandbox, tiny, tiny_ctx, tiny_task

__all__ = ["local_sandbox", "tiny", "tiny_ctx", "tiny_task"]
