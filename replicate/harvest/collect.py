"""Harvest real inputs: run the repository's own tests and doctests with the recording plugin.

The tests run in the sandbox (no network) on a writable copy of the pristine tree, with the
repository's environment; the plugin (replicate/harvest/plugin.py, stdlib only) wraps every
target before collection and streams one JSON line per distinct call.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from replicate import jsonl
from replicate.core import Target
from replicate.harvest import budget as harvest_budget
from replicate.harvest import by_value_pickler as harvest_byvalue
from replicate.harvest import item_limit as harvest_item_limit
from replicate.harvest import plugin as harvest_plugin
from replicate.harvest import rebuild as harvest_rebuild
from replicate.harvest import wrapping as harvest_wrapping
from replicate.harvest.declared import DeclaredPath, declared_tests
from replicate.jail import (
    JAIL_ENV,
    Jail,
    Limits,
    Mount,
    RepoContext,
    SandboxRequest,
    module_file,
)
from replicate.scratch import temporary_dir

TEST_DIR_NAMES = ("tests", "test", "testing")
# Where an isolating sandbox shows the harvest's scratch folder (its copy of the tree, the
# plugin, the output): the same path in every gen, so a path a test hands a target (a data file
# beside the tests, found from __file__) is recorded alike each time.
HARVEST_ROOT = "/tmp/replicate-harvest"


@dataclass(frozen=True)
class HarvestedCall:
    pickle_b64: str
    origin: str
    rebuilt: bool = False  # `self` did not pickle: the input builds it afresh from its class call
    ctor_b64: str = ""  # a method's: the pickled class call that built `self`, when recorded
    visible: bool = True  # made from test code or a doctest (the agent can read it)


@dataclass(frozen=True)
class TargetStats:
    """What the recorder saw of one target over the test run."""

    calls: int = 0  # calls made while the tests ran
    distinct: int = 0  # distinct calls among those it looked at
    recorded: int = 0
    dropped: int = 0  # calls it could not record (arguments that do not pickle, too large)
    spent_in: str = ""  # the test during which the target's budget ran out
    tests: int = 0  # test items that called it
    busiest: str = ""  # the test item that called it most
    busiest_calls: int = 0
    stopped: Mapping[str, int] = field(default_factory=dict)  # test items let be, by why


@dataclass(frozen=True)
class HarvestResult:
    calls: Mapping[str, tuple[HarvestedCall, ...]]
    drops: Mapping[str, Counter[str]]
    not_wrapped: Mapping[str, str]
    extra_paths: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    configured: bool = False  # the plugin ran: pytest got past loading the configuration
    log_tail: str = ""
    notes: tuple[str, ...] = field(default=())
    stats: Mapping[str, TargetStats] = field(default_factory=dict)
    drop_details: Mapping[tuple[str, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class CollectedPaths:
    """What the harvest hands pytest: the usual folders and packages, then what the repository
    declares beyond them (`harvest/declared.py`), read once per harvest."""

    usual: tuple[str, ...]
    declared: tuple[DeclaredPath, ...]

    @property
    def paths(self) -> list[str]:
        return [*self.usual, *(d.path for d in self.declared)]

    def note(self) -> tuple[str, ...]:
        """Which test paths came from what the repository declares, beyond the usual folders."""
        if not self.declared:
            return ()
        named = ", ".join(f"{d.path} ({d.source})" for d in self.declared[:6])
        more = f" and {len(self.declared) - 6} more" if len(self.declared) > 6 else ""
        return (f"tests also collected from what the repository declares: {named}{more}",)


def collected_paths(tree: Path, source_roots: Sequence[str]) -> CollectedPaths:
    usual = _usual_paths(tree, source_roots)
    declared = [d for d in declared_tests(tree, source_roots) if d.path not in usual]
    return CollectedPaths(tuple(usual), tuple(declared))


def test_paths(tree: Path, source_roots: Sequence[str]) -> list[str]:
    """Repo-relative paths to hand to pytest: test folders, then packages (for doctests), then
    what the repository declares beyond them (`harvest/declared.py`)."""
    return collected_paths(tree, source_roots).paths


def _usual_paths(tree: Path, source_roots: Sequence[str]) -> list[str]:
    found: list[str] = []
    for name in TEST_DIR_NAMES:
        for candidate in (tree / name, *(tree / root / name for root in source_roots)):
            rel = candidate.relative_to(tree).as_posix()
            if candidate.is_dir() and rel not in found:
                found.append(rel)
    for root in source_roots:
        base = tree / root
        for child in sorted(base.iterdir()) if base.is_dir() else []:
            is_package = child.is_dir() and (child / "__init__.py").is_file()
            is_module = child.suffix == ".py" and child.name not in ("setup.py", "conftest.py")
            if (is_package or is_module) and not child.name.startswith((".", "test")):
                found.append(child.relative_to(tree).as_posix())
    return found


ITEM_LIMIT_S = 60.0  # a test item running longer is stopped, the suite goes on (the plugin's)


@dataclass(frozen=True)
class HarvestBudget:
    """What the recorder may keep per target: `max_per_target` distinct calls, of which any one
    test item leaves a share (a quarter) for the tests after it; `by_attempts`: the former
    budget (every call, repeats too, counted against 3 x `max_per_target`, no share per test),
    kept to compare with; `benchmarks_once`: benchmark plugins installed in the environment are
    told to run each benchmark once; `by_value`: arguments `pickle` refuses (a lambda of a
    test) are pickled by value (`replicate.jail.by_value_module`), else dropped as before;
    `item_limit_s`: a test item (setup and call) running longer is stopped and the suite goes on
    (0: no limit)."""

    max_per_target: int = 200
    by_attempts: bool = False
    benchmarks_once: bool = True
    by_value: bool = True
    item_limit_s: float = ITEM_LIMIT_S


PLUGIN_FILES = {
    "replicate_harvest.py": harvest_plugin,
    "replicate_harvest_budget.py": harvest_budget,
    "replicate_harvest_rebuild.py": harvest_rebuild,
    "replicate_harvest_by_value_pickler.py": harvest_byvalue,
    "replicate_harvest_item_limit.py": harvest_item_limit,
    "replicate_harvest_wrapping.py": harvest_wrapping,
}
# Benchmark plugins (their import name in the environment) and their option that runs each
# benchmarked function once: their loops would only repeat one call.  (pytest-codspeed loops
# only under its `--codspeed`, which the harvest never passes.)
BENCHMARK_OPTIONS = {"pytest_benchmark": ("--benchmark-disable",)}


def install_plugin(folder: Path) -> None:
    """Copy the recording plugin and the modules it imports into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, module in PLUGIN_FILES.items():
        shutil.copyfile(str(module.__file__), folder / name)


def benchmark_options(site_packages: Path) -> tuple[str, ...]:
    """The options that make the benchmark plugins installed in `site_packages` run once."""
    found: list[str] = []
    for package, options in BENCHMARK_OPTIONS.items():
        if (site_packages / package).is_dir():
            found += options
    return tuple(found)


def _argv(
    ctx: RepoContext, paths: Sequence[str], budget: HarvestBudget, drop_addopts: bool
) -> tuple[str, ...]:
    argv = [str(ctx.python), "-m", "pytest", "-p", "replicate_harvest", "-p", "no:cacheprovider"]
    argv += ["-q", "-rN", "--continue-on-collection-errors", "--doctest-modules"]
    if budget.benchmarks_once:
        argv += benchmark_options(ctx.site_packages)
    if drop_addopts:
        argv += ["-o", "addopts="]
    return (*argv, *paths)


def run_harvest(
    jail: Jail,
    targets: Mapping[str, Target],
    *,
    timeout_s: float = 900.0,
    budget: HarvestBudget = HarvestBudget(),
) -> HarvestResult:
    """Run the repository's tests once (again without its addopts if pytest refuses them)."""
    with temporary_dir("replicate-harvest-") as scratch_name:
        scratch = Path(scratch_name)
        result = _attempt(jail, targets, scratch, timeout_s, budget, False)
        if result.exit_code in (3, 4) and not result.calls and not result.timed_out:
            shutil.rmtree(scratch / "work")
            (scratch / "harvest.jsonl").unlink(missing_ok=True)
            retry = _attempt(jail, targets, scratch, timeout_s, budget, True)
            note = "pytest refused the repository's addopts; ran again without them"
            return HarvestResult(**{**retry.__dict__, "notes": (*retry.notes, note)})
        return result


def _attempt(
    jail: Jail,
    targets: Mapping[str, Target],
    scratch: Path,
    timeout_s: float,
    budget: HarvestBudget,
    drop_addopts: bool,
) -> HarvestResult:
    ctx = jail.ctx
    work = scratch / "work"
    shutil.copytree(ctx.tree, work, symlinks=True)
    plugin_dir = scratch / "plugin"
    install_plugin(plugin_dir)
    out = scratch / "harvest.jsonl"
    inside = Path(HARVEST_ROOT) if jail.sandbox.isolated else scratch  # plain shows host paths

    def seen(path: Path) -> str:
        return str(inside / path.relative_to(scratch))

    config = {
        "targets": [
            {"key": key, "module": t.module, "qualname": t.qualname, "kind": t.kind}
            for key, t in targets.items()
        ],
        "out": seen(out),
        "max_per_target": budget.max_per_target,
        "budget": "attempts" if budget.by_attempts else "distinct",
        "by_value": module_file() if budget.by_value else None,
        "item_limit_s": budget.item_limit_s,
    }
    (scratch / "harvest.json").write_text(json.dumps(config), encoding="utf-8")
    python_path = [seen(plugin_dir), *ctx.sys_path(Path(seen(work)))]
    paths = collected_paths(work, ctx.source_roots)
    request = SandboxRequest(
        argv=_argv(ctx, paths.paths, budget, drop_addopts),
        env={
            **JAIL_ENV,
            "PYTHONHASHSEED": "0",
            "PYTHONPATH": ":".join(python_path),
            "REPLICATE_HARVEST": seen(scratch / "harvest.json"),
        },
        cwd=seen(work),
        timeout_s=timeout_s,
        mounts=(*ctx.mounts(), Mount(str(scratch), str(inside), writable=True)),
        limits=Limits(memory_mb=4096, pids=512, file_size_mb=2048, output_bytes=200_000),
    )
    result = jail.sandbox.run(request)
    parsed = _parse(out, Path(seen(work)))
    tail = (result.stdout + result.stderr).decode("utf-8", "replace").strip().splitlines()[-5:]
    return HarvestResult(
        calls=parsed.calls,
        drops=parsed.drops,
        not_wrapped=parsed.not_wrapped,
        extra_paths=parsed.extra_paths,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        configured=parsed.configured,
        log_tail="\n".join(tail),
        notes=(
            *paths.note(),
            *parsed.notes,
            *_rebuilt_note(parsed.calls),
            *_benchmark_note(ctx, budget),
        ),
        stats=parsed.stats,
        drop_details=parsed.drop_details,
    )


def _benchmark_note(ctx: RepoContext, budget: HarvestBudget) -> tuple[str, ...]:
    options = benchmark_options(ctx.site_packages) if budget.benchmarks_once else ()
    if not options:
        return ()
    return (f"benchmarks ran once each ({' '.join(options)}): their loops repeat one call",)


def _rebuilt_note(calls: Mapping[str, Sequence[HarvestedCall]]) -> tuple[str, ...]:
    """How many traced calls of how many methods build `self` afresh from its class call."""
    counts = [sum(c.rebuilt for c in found) for found in calls.values()]
    total, methods = sum(counts), sum(1 for n in counts if n)
    if not total:
        return ()
    return (
        f"{total} traced calls of {methods} methods rebuild `self` from the class call that"
        " built it (it did not pickle)",
    )


def _parse(out: Path, work: Path) -> HarvestResult:
    calls: dict[str, list[HarvestedCall]] = defaultdict(list)
    drops: dict[str, Counter[str]] = defaultdict(Counter)
    not_wrapped: dict[str, str] = {}
    extra: list[str] = []
    stats: dict[str, TargetStats] = {}
    details: dict[tuple[str, str], str] = {}
    notes: list[str] = []
    configured = False
    text = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
    for line in jsonl.split(text):
        try:
            rec = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill
        if type(rec) is not dict:
            continue  # the tests run beside this file: whatever else they wrote is not ours
        kind = rec.get("rec")
        configured = True
        try:
            if kind == "call":
                _add_call(calls[rec["key"]], rec)
            elif kind == "drop":
                drops[rec["key"]][rec["reason"]] += int(rec["count"])
                details.setdefault((rec["key"], rec["reason"]), str(rec.get("detail", "")))
            elif kind == "stats":
                stats[rec["key"]] = _stats(rec)
            elif kind == "wrap" and not rec["ok"]:
                not_wrapped[rec["key"]] = rec["reason"]
            elif kind == "paths":
                extra = _repo_paths(rec["sys_path"], work)
            elif kind == "too_long":
                notes.append(_too_long_note([str(t) for t in rec["tests"]], rec["limit_s"]))
        except (KeyError, TypeError, ValueError):
            continue
    return HarvestResult(
        calls={k: tuple(v) for k, v in calls.items()},
        drops=dict(drops),
        not_wrapped=not_wrapped,
        extra_paths=tuple(extra),
        exit_code=None,
        timed_out=False,
        configured=configured,
        stats=stats,
        drop_details=details,
        notes=tuple(notes),
    )


def _too_long_note(tests: list[str], limit_s: object) -> str:
    first = f": {tests[0]}" + (f" and {len(tests) - 1} more" if len(tests) > 1 else "")
    return (
        f"stopped {len(tests)} test item(s) at the per-item limit ({limit_s} s, halved after "
        f"each one stopped), their calls so far kept{first}"
    )


def _stats(rec: Mapping[str, object]) -> TargetStats:
    """A stats record as `TargetStats` (TypeError or ValueError on a malformed one)."""
    counts = {f: int(str(rec.get(f, 0))) for f in ("calls", "distinct", "recorded", "dropped")}
    stopped = rec.get("stopped", {})
    if not isinstance(stopped, dict):
        raise TypeError("malformed stats record")
    return TargetStats(
        **counts,
        spent_in=str(rec.get("spent_in", "")),
        tests=int(str(rec.get("tests", 0))),
        busiest=str(rec.get("busiest", "")),
        busiest_calls=int(str(rec.get("busiest_calls", 0))),
        stopped={str(k): int(v) for k, v in stopped.items()},
    )


def _add_call(found: list[HarvestedCall], rec: Mapping[str, object]) -> None:
    """Append a call record; one written again because a test made it too marks the first
    visible (a record without the flag, from an older plugin, is visible)."""
    ctor = rec.get("ctor_b64")
    pickled = rec["pickle_b64"]
    origin = rec.get("origin", "")
    if type(pickled) is not str or type(origin) is not str:
        raise TypeError("malformed call record")
    visible = rec.get("visible") is not False
    call = HarvestedCall(
        pickled, origin, rec.get("rebuilt") is True, ctor if type(ctor) is str else "", visible
    )
    for n, seen in enumerate(found):
        if seen.pickle_b64 == call.pickle_b64:
            if visible and not seen.visible:
                found[n] = dataclasses.replace(seen, visible=True)
            return
    found.append(call)


def _repo_paths(sys_path: Sequence[str], work: Path) -> list[str]:
    """sys.path entries inside the repository copy (test folders pytest inserted), repo-relative."""
    out: list[str] = []
    root = work.resolve()
    for entry in sys_path:
        try:
            rel = Path(entry).resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            continue
        if rel not in out:
            out.append(rel)
    return out
