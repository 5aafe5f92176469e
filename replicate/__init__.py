"""replicate: turn real software into replication-training tasks and grade coding agents."""

from __future__ import annotations

__version__ = "0.1.0"
GRADER_VERSION = "replicate-grader/1"

__all__ = ["GRADER_VERSION", "__version__"]
