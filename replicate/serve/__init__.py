"""`replicate serve`: grading over HTTP for trainers that call a reward server."""

from __future__ import annotations

from replicate.serve.app import ServeSettings, create_app
from replicate.serve.hosts import HostCheck, is_loopback

__all__ = [
    "HostCheck",
    "ServeSettings",
    "create_app",
    "is_loopback",
]
