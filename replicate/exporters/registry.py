"""Export formats by name: a new format is one module with an `Exporter` and one line here."""

from __future__ import annotations

from collections.abc import Callable

from replicate.errors import ReplicateError
from replicate.exporters.base import Exporter
from replicate.exporters.harbor import HarborExporter
from replicate.exporters.inspect_eval import InspectExporter
from replicate.exporters.rows import RowsExporter

EXPORTERS: dict[str, Callable[[], Exporter]] = {
    "harbor": HarborExporter,
    "inspect": InspectExporter,
    "rows": RowsExporter,
}


def exporter(name: str) -> Exporter:
    """The exporter registered as `name`; an unknown name is a one-line error naming the choices."""
    factory = EXPORTERS.get(name)
    if factory is None:
        choices = ", ".join(sorted(EXPORTERS))
        raise ReplicateError(f"unknown export format {name!r}; choose one of: {choices}")
    return factory()
