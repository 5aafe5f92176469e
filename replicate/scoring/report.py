"""`replicate report`: one self-contained HTML page about a RUN_DIR (and, with `--compare`, how
a second run differs task by task).  Plots are inline PNGs from matplotlib (`plots.py`); the page
is a jinja2 template with autoescaping on, since task ids, reasons, candidates and transcripts
are untrusted text; it references nothing outside itself."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate.core import BANDS, Difficulty, ResultRow
from replicate.scoring import plots
from replicate.scoring.rundata import RunData, candidate_diff, load_run, transcript
from replicate.scoring.stats import TaskStats, overall_pass_at, task_stats

TEMPLATE = "report.html.j2"
SLOWEST = 10
REASONS = 15
REASON_CHARS = 160
ORDER = ("regressed", "improved", "only in this run", "only in the compared run", "unchanged")
SAME = 1e-9  # mean rewards closer than this are unchanged


@dataclass(frozen=True)
class Attempt:
    row: ResultRow
    diff: str | None
    transcript: str | None


@dataclass(frozen=True)
class TaskView:
    task_id: str
    anchor: str
    symbol: str
    repo: str
    stats: TaskStats
    attempts: tuple[Attempt, ...]
    difficulty: Difficulty | None = None
    copy: float | None = None  # mean memorisation signal of the attempts that have one


@dataclass(frozen=True)
class Change:
    task_id: str
    symbol: str
    before: float | None  # mean reward in the compared run (None: not graded there)
    after: float | None  # in this run
    verdict: str  # improved, regressed, unchanged, only in one of the runs


@dataclass(frozen=True)
class Page:
    run: RunData
    mean_reward: float | None
    mean_copy: float | None  # of the attempts whose verdict has one
    infra_errors: int
    pass_at: tuple[float | None, ...]
    tasks: tuple[TaskView, ...]
    reasons: tuple[tuple[str, int], ...]
    slowest: tuple[tuple[str, ResultRow], ...]
    plots: tuple[tuple[str, str], ...]  # (title, data URI)
    other: RunData | None = None
    changes: tuple[Change, ...] = ()

    def count(self, verdict: str) -> int:
        return sum(change.verdict == verdict for change in self.changes)


def build_page(run_dir: Path, compare_dir: Path | None = None) -> Page:
    run = load_run(run_dir)
    other = load_run(compare_dir) if compare_dir is not None else None
    stats = task_stats(run.rows, run.samples)
    rewards = [r.reward for r in run.rows if r.reward is not None]
    return Page(
        run=run,
        mean_reward=sum(rewards) / len(rewards) if rewards else None,
        mean_copy=_mean_copy(run.rows),
        infra_errors=sum(r.status == "infra_error" for r in run.rows),
        pass_at=overall_pass_at(stats, run.samples),
        tasks=tuple(_task_view(run, s, i) for i, s in enumerate(stats)),
        reasons=_reasons(run.rows),
        slowest=tuple(
            (run.symbol(r.task_id), r)
            for r in sorted(run.rows, key=lambda r: -r.duration_s)[:SLOWEST]
        ),
        plots=_plots(run, stats, other),
        other=other,
        changes=_changes(run, other) if other is not None else (),
    )


def render(page: Page) -> str:
    import jinja2  # imported on use: nothing at import time

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["num"] = _number
    return env.get_template(TEMPLATE).render(page=page)


def write_report(run_dir: Path, out: Path, compare_dir: Path | None = None) -> Page:
    page = build_page(run_dir, compare_dir)
    out.write_text(render(page), encoding="utf-8")
    return page


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _task_view(run: RunData, stats: TaskStats, index: int) -> TaskView:
    rows = sorted((r for r in run.rows if r.task_id == stats.task_id), key=lambda r: r.sample)
    return TaskView(
        task_id=stats.task_id,
        anchor=f"task-{index}",
        symbol=run.symbol(stats.task_id),
        repo=run.repo(stats.task_id),
        stats=stats,
        attempts=tuple(
            Attempt(
                row=r,
                diff=candidate_diff(run, r.task_id, r.sample),
                transcript=transcript(run, r.task_id, r.sample),
            )
            for r in rows
        ),
        difficulty=run.difficulty(stats.task_id),
        copy=_mean_copy(rows),
    )


def _mean_copy(rows: Sequence[ResultRow]) -> float | None:
    copies = [r.copy_share for r in rows if r.copy_share is not None]
    return sum(copies) / len(copies) if copies else None


def _copies(run: RunData) -> list[tuple[float, float]]:
    """(copy, reward) of each graded attempt that has both."""
    return [
        (r.copy_share, r.reward)
        for r in run.rows
        if r.copy_share is not None and r.reward is not None
    ]


def _reasons(rows: tuple[ResultRow, ...]) -> tuple[tuple[str, int], ...]:
    """Why attempts fell short of 1.0, most common first (long reasons cut)."""
    counted = Counter(_short(r.reason) for r in rows if r.reward is None or r.reward < 1.0)
    return tuple(counted.most_common(REASONS))


def _short(reason: str) -> str:
    line = " ".join(reason.split())
    return line if len(line) <= REASON_CHARS else line[: REASON_CHARS - 3] + "..."


def _means_by_repo(run: RunData) -> dict[str, float]:
    found: dict[str, list[float]] = {}
    for row in run.rows:
        if row.reward is not None:
            found.setdefault(run.repo(row.task_id), []).append(row.reward)
    return {repo: sum(v) / len(v) for repo, v in sorted(found.items())}


def _means_by_band(run: RunData) -> dict[str, float]:
    """Mean reward per difficulty band, easy first, each labelled with its number of tasks."""
    found: dict[str, list[float]] = {}
    tasks: dict[str, set[str]] = {}
    for row in run.rows:
        measured = run.difficulty(row.task_id)
        if row.reward is not None and measured is not None:
            found.setdefault(measured.band, []).append(row.reward)
            tasks.setdefault(measured.band, set()).add(row.task_id)
    return {
        f"{band} ({len(tasks[band])} tasks)": sum(found[band]) / len(found[band])
        for band in BANDS
        if band in found
    }


def _plots(
    run: RunData, stats: tuple[TaskStats, ...], other: RunData | None
) -> tuple[tuple[str, str], ...]:
    runs = [("this run", run)] + ([("compared run", other)] if other is not None else [])
    rewards = {n: [r.reward for r in one.rows if r.reward is not None] for n, one in runs}
    curves = {n: overall_pass_at(task_stats(one.rows, one.samples), one.samples) for n, one in runs}
    copies = {n: _copies(one) for n, one in runs}
    return (
        ("Reward histogram", plots.reward_histogram(rewards)),
        ("pass@k", plots.pass_at_k_curve(curves)),
        ("Mean reward by repository", plots.reward_by_repo(_means_by_repo(run))),
        *_band_plot(run),
        ("Reward against copy of the original", plots.reward_against_copy(copies)),
    )


def _band_plot(run: RunData) -> tuple[tuple[str, str], ...]:
    means = _means_by_band(run)
    return (("Mean reward by difficulty", plots.reward_by_repo(means)),) if means else ()


def _changes(run: RunData, other: RunData) -> tuple[Change, ...]:
    after = {s.task_id: s.mean_reward for s in task_stats(run.rows, run.samples)}
    before = {s.task_id: s.mean_reward for s in task_stats(other.rows, other.samples)}
    out = []
    for ident in dict.fromkeys([*after, *before]):
        a, b = after.get(ident), before.get(ident)
        symbol = run.symbol(ident) if ident in after else other.symbol(ident)
        out.append(Change(ident, symbol, b, a, _verdict(ident in before, ident in after, b, a)))
    return tuple(sorted(out, key=lambda c: (ORDER.index(c.verdict), c.symbol)))


def _verdict(there: bool, here: bool, before: float | None, after: float | None) -> str:
    if not there:
        return "only in this run"
    if not here:
        return "only in the compared run"
    if before is None or after is None or abs(after - before) <= SAME:
        return "unchanged"
    return "improved" if after > before else "regressed"
