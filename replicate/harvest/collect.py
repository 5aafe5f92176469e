"""Harvest real inputs: run the repository's own tests and doctests with the recording plugin.

The tests run in the sandbox (no network) on a writable copy of the pristine tree, with the
repository's environment; the plugin (replicate/harvest/plugin.py, stdlib only) wraps every
target before collection and streams one JSON line per distinct call.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from replicate.core import CallSequence, ClassRef, Target
from replicate.harvest import budget as harvest_budget
from replicate.harvest import by_value_pickler as harvest_byvalue
from replicate.harvest import item_limit as harvest_item_limit
from replicate.harvest import plugin as harvest_plugin
from replicate.harvest import rebuild as harvest_rebuild
from replicate.harvest import sequences as harvest_sequences
from replicate.harvest import test_code as harvest_test_code
from replicate.harvest import wrapping as harvest_wrapping
from replicate.harvest.call_sequences import SequenceBudget, sequence_config
from replicate.harvest.declared import DeclaredPath, declared_tests, python_files
from replicate.harvest.documented import doctest_options, documented_examples
from replicate.harvest.examples import write_examples
from replicate.harvest.reading import (  # the records are read there; named here too
    HarvestedCall,
    HarvestResult,
    TargetStats,  # noqa: F401
    _parse,
)
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
class CollectedPaths:
    """What the harvest hands pytest: the usual folders and packages, then what the repository
    declares beyond them (`harvest/declared.py`), read once per harvest."""

    usual: tuple[str, ...]
    declared: tuple[DeclaredPath, ...]
    python_files: tuple[str, ...] = ()  # pytest's `python_files` to run with (empty: its own)

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


def collected_paths(
    tree: Path, source_roots: Sequence[str], examples: Sequence[DeclaredPath] = ()
) -> CollectedPaths:
    """`examples`: the doctest files `harvest/examples.py` wrote into `tree`."""
    usual = _usual_paths(tree, source_roots)
    found = (*declared_tests(tree, source_roots), *documented_examples(tree), *examples)
    declared = [d for d in found if d.path not in usual]
    return CollectedPaths(tuple(usual), tuple(declared), python_files(tree, declared))


def test_paths(tree: Path, source_roots: Sequence[str]) -> list[str]:
    """Repo-relative paths to hand to pytest: test folders, then packages (for doctests), then
    what the repository declares beyond them (`harvest/declared.py`), then its documentation
    files that show examples (`harvest/documented.py`)."""
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


DEFAULT_SEQUENCES = SequenceBudget()
PLUGIN_FILES = {
    "replicate_harvest.py": harvest_plugin,
    "replicate_harvest_budget.py": harvest_budget,
    "replicate_harvest_rebuild.py": harvest_rebuild,
    "replicate_harvest_by_value_pickler.py": harvest_byvalue,
    "replicate_harvest_item_limit.py": harvest_item_limit,
    "replicate_harvest_wrapping.py": harvest_wrapping,
    "replicate_harvest_sequences.py": harvest_sequences,
    "replicate_harvest_test_code.py": harvest_test_code,
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
    ctx: RepoContext, paths: CollectedPaths, budget: HarvestBudget, drop_addopts: bool
) -> tuple[str, ...]:
    argv = [str(ctx.python), "-m", "pytest", "-p", "replicate_harvest", "-p", "no:cacheprovider"]
    argv += ["-q", "-rN", "--continue-on-collection-errors", "--doctest-modules"]
    if budget.benchmarks_once:
        argv += benchmark_options(ctx.site_packages)
    if drop_addopts:
        argv += ["-o", "addopts="]
    if paths.python_files:
        argv += ["-o", "python_files=" + " ".join(paths.python_files)]
    argv += doctest_options(paths.declared)
    return (*argv, *paths.paths)


def run_harvest(
    jail: Jail,
    targets: Mapping[str, Target],
    *,
    timeout_s: float = 900.0,
    budget: HarvestBudget = HarvestBudget(),
    classes: Mapping[str, ClassRef] | None = None,
    sequence_budget: SequenceBudget = DEFAULT_SEQUENCES,
) -> HarvestResult:
    """Run the repository's tests once (again without its addopts if pytest refuses them);
    with `classes` (by their `key`), the call sequences made on their instances too."""
    chosen = _Chosen(targets, classes or {}, sequence_budget)
    with temporary_dir("replicate-harvest-") as scratch_name:
        scratch = Path(scratch_name)
        result = _attempt(jail, chosen, scratch, timeout_s, budget, False)
        if result.exit_code in (3, 4) and not result.calls and not result.timed_out:
            shutil.rmtree(scratch / "work")
            (scratch / "harvest.jsonl").unlink(missing_ok=True)
            retry = _attempt(jail, chosen, scratch, timeout_s, budget, True)
            note = "pytest refused the repository's addopts; ran again without them"
            return HarvestResult(**{**retry.__dict__, "notes": (*retry.notes, note)})
        return result


def record_sequences(
    jail: Jail, classes: Mapping[str, ClassRef], budget: SequenceBudget = DEFAULT_SEQUENCES
) -> Mapping[str, tuple[CallSequence, ...]]:
    """The call sequences the repository's tests make on instances of `classes`, per key."""
    return run_harvest(jail, {}, classes=classes, sequence_budget=budget).sequences


@dataclass(frozen=True)
class _Chosen:
    """What a harvest records: the targets' calls, the classes' sequences."""

    targets: Mapping[str, Target]
    classes: Mapping[str, ClassRef]
    budget: SequenceBudget


def _attempt(
    jail: Jail,
    chosen: _Chosen,
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
            for key, t in chosen.targets.items()
        ],
        **sequence_config(chosen.classes, chosen.budget),
        "out": seen(out),
        "max_per_target": budget.max_per_target,
        "budget": "attempts" if budget.by_attempts else "distinct",
        "by_value": module_file() if budget.by_value else None,
        "item_limit_s": budget.item_limit_s,
    }
    (scratch / "harvest.json").write_text(json.dumps(config), encoding="utf-8")
    python_path = [seen(plugin_dir), *ctx.sys_path(Path(seen(work)))]
    paths = collected_paths(work, ctx.source_roots, write_examples(work, ctx.source_roots))
    request = SandboxRequest(
        argv=_argv(ctx, paths, budget, drop_addopts),
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
    parsed = _parse(out, Path(seen(work)), chosen.classes)
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
        sequences=parsed.sequences,
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
