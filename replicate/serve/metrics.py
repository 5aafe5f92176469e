"""The server's Prometheus metrics, in a registry of its own (one per app)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


class Metrics:
    """Requests by path and status, latency, queue depth, grades, infrastructure errors."""

    def __init__(self) -> None:
        reg = self.registry = CollectorRegistry()
        self.requests = Counter(
            "replicate_requests", "HTTP requests", ["path", "status"], registry=reg
        )
        self.latency = Histogram(
            "replicate_request_seconds",
            "Request latency in seconds",
            ["path"],
            buckets=LATENCY_BUCKETS,
            registry=reg,
        )
        self.queued = Gauge("replicate_queue_depth", "Grades admitted, not started", registry=reg)
        self.running = Gauge("replicate_grades_running", "Grades running now", registry=reg)
        self.grades = Counter("replicate_grades", "Candidates graded", registry=reg)
        self.infra_errors = Counter(
            "replicate_infra_errors",
            "Grades that failed for a reason not the candidate's (no reward given)",
            registry=reg,
        )
        self.rejected = Counter(
            "replicate_rejected", "Requests turned away because the queue was full", registry=reg
        )

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
