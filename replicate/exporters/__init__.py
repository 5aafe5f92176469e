"""Turning a task batch into what a training or evaluation framework reads (`replicate export`)."""

from __future__ import annotations

from replicate.exporters.base import ExportOptions, Written
from replicate.exporters.registry import EXPORTERS, exporter

__all__ = [
    "EXPORTERS",
    "ExportOptions",
    "Written",
    "exporter",
]
