"""Turning a task batch into what a training or evaluation framework reads (`replicate export`)."""

from __future__ import annotations

from replicate.exporters.base import ExportOptions, Written
from replicate.exporters.plan import ExportPlan, PlannedTask, plan_export
from replicate.exporters.registry import EXPORTERS, exporter

__all__ = [
    "EXPORTERS",
    "ExportOptions",
    "ExportPlan",
    "PlannedTask",
    "Written",
    "exporter",
    "plan_export",
]
