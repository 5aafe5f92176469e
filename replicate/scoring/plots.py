"""The report's plots, drawn by matplotlib (the Agg backend, no display) and returned as PNG
data URIs, so the HTML file carries them inline and opens with no request to anywhere."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

WIDTH_IN = 5.2
HEIGHT_IN = 2.8
DPI = 100


def _figure() -> tuple[Any, Any]:
    import matplotlib  # imported on use: nothing at import time, and only `report` needs it

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, layout="constrained")
    return figure, figure.subplots()


def _data_uri(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def reward_histogram(series: Mapping[str, Sequence[float]]) -> str:
    """Rewards of the graded attempts in ten bins over [0, 1], one colour per run."""
    figure, axes = _figure()
    bins = [i / 10 for i in range(11)]
    values = [list(v) for v in series.values()]
    axes.hist(values, bins=bins, label=list(series), edgecolor="white")
    axes.set_xlabel("reward")
    axes.set_ylabel("attempts")
    axes.set_xlim(0, 1)
    if len(series) > 1:
        axes.legend()
    return _data_uri(figure)


def pass_at_k_curve(series: Mapping[str, Sequence[float | None]]) -> str:
    """pass@k over k = 1..K, averaged over the tasks, one line per run."""
    figure, axes = _figure()
    for name, values in series.items():
        points = [(k, v) for k, v in enumerate(values, start=1) if v is not None]
        if points:
            axes.plot(*zip(*points, strict=True), marker="o", label=name)
    axes.set_xlabel("k (attempts)")
    axes.set_ylabel("pass@k")
    axes.set_ylim(-0.02, 1.02)
    most = max((len(values) for values in series.values()), default=1)
    axes.set_xlim(0.5, most + 0.5)  # one sample: k = 1 alone, not a dot on a 0.96-1.04 axis
    if most <= 12:
        axes.set_xticks(range(1, most + 1))
    else:
        axes.xaxis.get_major_locator().set_params(integer=True)
    if len(series) > 1:
        axes.legend()
    return _data_uri(figure)


def reward_against_copy(series: Mapping[str, Sequence[tuple[float, float]]]) -> str:
    """Each graded attempt as a point: its copy of the original (x) against its reward (y), one
    colour per run.  Recall sits top right; a re-implementation that earns 1.0, top left."""
    figure, axes = _figure()
    for name, points in series.items():
        if points:
            axes.scatter(*zip(*points, strict=True), s=14, alpha=0.6, label=name)
    axes.set_xlabel("copy of the original")
    axes.set_ylabel("reward")
    axes.set_xlim(-0.02, 1.02)
    axes.set_ylim(-0.02, 1.02)
    if len(series) > 1:
        axes.legend()
    return _data_uri(figure)


def reward_by_repo(means: Mapping[str, float]) -> str:
    """Mean reward per repository (or per difficulty band), one horizontal bar each."""
    figure, axes = _figure()
    names = list(means)
    axes.barh(range(len(names)), [means[n] for n in names], height=0.6, color="#4c72b0")
    axes.set_yticks(range(len(names)), labels=[_short(n) for n in names])
    axes.set_ylim(max(len(names), 3) - 0.5, -0.5)  # the first on top; a lone bar stays thin
    axes.set_xlim(0, 1)
    axes.set_xlabel("mean reward")
    return _data_uri(figure)


def _short(name: str, limit: int = 40) -> str:
    return name if len(name) <= limit else "..." + name[-(limit - 3) :]
