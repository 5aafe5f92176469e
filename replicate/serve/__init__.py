"""`replicate serve`: grading over HTTP for trainers that call a reward server."""

from __future__ import annotations

from replicate.serve.app import ServeSettings, create_app

__all__ = [
    "ServeSettings",
    "create_app",
]
