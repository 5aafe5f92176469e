"""`replicate gen --repo npm:NAME@VERSION` end to end on npm packages that ship their OWN tests,
under three runners, each minted once per session: minimist 1.2.8 and qs 6.13.0 (tape), semver
4.3.6 (node-tap) and yargs-parser 1.1.0 (mocha). Their development dependencies (the runner, and
the libraries the tests use) are installed into the cache with no lifecycle script run, the test
files run under the recorder in the jail with them, and no test file is ours.

Each funnel table is printed with every drop's reason and the yield. qs's tarball ships
`dist/qs.js`, a browserify bundle of its `lib/`, and semver's ships `semver.min.js`,
`semver.browser.js` and both gzipped: gen hides them (they are not in the batch's tree, so
neither the agent's workspace nor any jail shows them) and the targets mint; no task drops as
leaked. Every task's reference earns 1.0 and its stub 0.0 through the grader (the first of each
package through `replicate grade`); each package's mutant kill-rate median is held to the bar;
no copy of qs is among qs's installed dependencies, and the leak audit finds none.

None of the allowed packages ships TypeScript tests or ES-module tests in its tarball (the
survey: docs/javascript.md): TypeScript and ES modules are minted from tests of their own
in tests/e2e/test_typescript.py and tests/e2e/test_javascript.py."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from replicate.batch import Batch
from replicate.core import DropReason
from replicate.gen import script_leaks
from replicate.gen.ledger import read_entries
from replicate.grading.javascript import grade_script
from replicate.jail import get_sandbox, node_deps
from tests.e2e.conftest import Minted, mint, minted_once, replicate
from tests.e2e.javascript_repos import funnel_table

SOURCES = {
    "minimist": "npm:minimist@1.2.8",
    "qs": "npm:qs@6.13.0",
    "semver": "npm:semver@4.3.6",
    "yargs-parser": "npm:yargs-parser@1.1.0",
}
RUNNER = {"minimist": "tape@", "qs": "tape@", "semver": "tap@", "yargs-parser": "mocha@"}
# the built copies each tarball ships, hidden by gen
HIDDEN = {
    "qs": ("dist/qs.js",),
    "semver": ("semver.min.js", "semver.min.js.gz", "semver.browser.js", "semver.browser.js.gz"),
}
EVERY_TARGET_CALLED = {"minimist", "qs", "yargs-parser"}  # semver's tests leave 7 uncalled
# at least: each package's tasks once its degenerate programs are graded (minimist 2 of 3:
# isConstructorOrProto returns false on nearly every call; semver 14 of 43: its tap tests call
# most functions themselves, and a table of those calls before a throw or `return version`
# reaches the floor on 13)
MIN_TASKS = {"minimist": 2, "qs": 8, "semver": 12, "yargs-parser": 3}
KILL_RATE_MEDIAN = 0.9


def _minted(factory: pytest.TempPathFactory, name: str) -> Minted:
    def make(root: Path) -> Minted:
        return mint(f"{name} (its own tests)", Path(SOURCES[name]), root / "batch")

    return minted_once(factory, f"npm-own-tests-{name}", make)


@pytest.fixture(params=sorted(SOURCES))
def made(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Minted:
    """One package minted (once a run): parametrised, so that xdist mints them side by side."""
    return _minted(tmp_path_factory, request.param)


def _name(made: Minted) -> str:
    return next(name for name, spec in SOURCES.items() if made.repo == Path(spec))


_table = funnel_table


def _drops(made: Minted) -> dict[str, str]:
    """Each dropped target's reason and detail, printed."""
    drops = {}
    for entry in read_entries(made.batch):
        if not entry.kept:
            drops[entry.symbol] = f"{entry.reason}: {entry.detail}"
            print(f"  dropped {entry.symbol}: {drops[entry.symbol]}")
    return drops


def _tasks(made: Minted) -> tuple[str, ...]:
    return Batch.open(made.batch).ids if made.stage("validated") else ()


def test_funnel_tasks_and_kill_rate(made: Minted) -> None:
    name = _name(made)
    print(_table(made))
    drops = _drops(made)
    print(f"{name}: yield {made.stage('validated')}/{made.stage('extracted')}")
    notes = " ".join(made.funnel["setup_notes"])
    assert "with --ignore-scripts" in notes and RUNNER[name] in notes, notes
    assert "not supported yet" not in notes  # each runner's files ran as what they are
    for hidden in HIDDEN.get(name, ()):
        assert hidden in notes, f"{hidden} is not hidden: {notes}"
        assert not list((made.batch / "reference_impls" / "_repos").glob(f"*/tree/{hidden}"))
    leaked = [
        e
        for e in read_entries(made.batch)
        if e.reason and DropReason.of(e.reason) is DropReason.LEAKED
    ]
    assert not leaked, drops
    if name in EVERY_TARGET_CALLED:
        assert made.stage("traced") == made.stage("extracted")
    assert made.stage("validated") >= MIN_TASKS[name], _table(made)
    rates = []
    for ident in _tasks(made):
        strength = Batch.open(made.batch).load(ident).hidden.strength
        assert strength is not None and strength.mutants > 0, ident
        print(f"{ident}: {strength.killed}/{strength.mutants} mutants killed")
        rates.append(strength.kill_rate)
    median = statistics.median(rates)
    print(f"{name}: kill-rate median over {len(rates)} tasks of its own tests: {median:.2f}")
    assert median >= KILL_RATE_MEDIAN


def _grade(batch: Path, ident: str, candidate: Path) -> dict[str, object]:
    done = replicate("grade", "--tasks", str(batch), "--task", ident, "--candidate", str(candidate))
    assert done.returncode == 0, done.stderr[-2000:]
    verdict: dict[str, object] = json.loads(done.stdout)
    return verdict


def test_the_reference_earns_1_and_the_stub_0(made: Minted, tmp_path: Path) -> None:
    batch = Batch.open(made.batch)
    first = _tasks(made)[0]
    task = batch.load(first)
    original, stub = tmp_path / "original.js", tmp_path / "stub.js"
    original.write_bytes(task.original_source())
    stub.write_bytes(task.stubbed_source())
    reference = _grade(made.batch, first, original)  # through the CLI
    assert (reference["reward"], reference["status"]) == (1.0, "graded"), reference
    stubbed = _grade(made.batch, first, stub)
    assert (stubbed["reward"], stubbed["status"]) == (0.0, "graded"), stubbed
    local = get_sandbox("local")
    for ident in _tasks(made):  # every task, through the same grader in this process
        task = batch.load(ident)
        for source, reward in ((task.original_source(), 1.0), (task.stubbed_source(), 0.0)):
            verdict = grade_script(task, source.decode(), local)
            assert not isinstance(verdict, str) and verdict.reward == reward, (ident, verdict)


def test_no_copy_of_qs_among_its_installed_dependencies(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    (tree,) = (_minted(tmp_path_factory, "qs").batch / "reference_impls" / "_repos").glob("*/tree")
    deps = node_deps.installed(tree)
    assert deps is not None
    print(f"qs's installed dependencies: {deps.note()}")
    # browserify's `url` depends on qs; browserify is left out when the full install fails
    # (a dependency of evalmd is fetched from GitHub), else its copy is replaced
    assert not node_deps.own_copies(deps.modules, "qs")
    assert script_leaks.installed_copy(tree) is None


def test_a_repos_file_takes_an_npm_source(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    """`gen --repos` with an `npm:NAME@VERSION` line (its `@` the version's, not a commit's)
    mints the package as `gen --repo` did (the tarball and its dependencies cached by then)."""
    listing = tmp_path / "repos.txt"
    listing.write_text(f"{SOURCES['minimist']}\n")
    out = tmp_path / "many"
    done = replicate("gen", "--repos", str(listing), "--out", str(out), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    minimist = _minted(tmp_path_factory, "minimist")
    (record,) = [json.loads(line) for line in (out / "repos.jsonl").read_text().splitlines()]
    assert (record["source"], record["status"]) == (SOURCES["minimist"], "minted"), record
    assert record["commit"] == minimist.funnel["commit"], record  # the same tarball
    assert len(record["tasks"]) == minimist.stage("validated") > 0, record
