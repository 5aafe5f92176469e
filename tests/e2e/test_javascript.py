"""`replicate gen` on JavaScript repositories, end to end through the real CLI: ms 2.1.3
(CommonJS) and camelcase 8.0.0 (an ES module), each with a `node:test` file of its own suite's
cases (`javascript_repos.py`), minted once per session into one batch. Every task records its
language and a measured kill rate against its mutants (printed, with their median), its
reference (the original file) earns 1.0 through `replicate grade` and its stub 0.0,
a candidate that does not parse earns 0 with the reason, and `replicate run --agent CMD` scores
an agent that writes one function right 1.0 there and 0.0 on the tasks it leaves stubbed, and
exported rows speak JavaScript and are scored by verl's reward function."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from replicate.batch import Batch
from replicate.cache import cache_root
from replicate.gen import javascript_baseline
from replicate.gen import javascript_families as families
from replicate.gen.baseline import VISIBLE
from replicate.grading import MAX_CONSTANT_BASELINE, MAX_DEGENERATE_REWARD, grade_text
from replicate.integrations.grading import close_graders
from replicate.integrations.verl import compute_score
from replicate.jail import Jail, context_for, get_sandbox
from tests.e2e.conftest import Minted, mint, minted_all_once, replicate
from tests.e2e.javascript_repos import funnel_table, script_repo

# ms's functions: parse, fmtShort, fmtLong and plural (each called through the export's paths;
# fast-check's strings make parse return undefined on nearly every widened input, but the calls
# its table of the visible calls would answer are the test file's own, not those ms's export
# made while a test ran: `return undefined` behind that table stays under the floor);
# camelcase's: camelCase (its three `const` helpers are unreachable by the recorder)
EXPECTED_TASKS = {"ms": 4, "camelcase": 1}
KILL_RATE_MEDIAN = 0.9  # the bar for JavaScript tasks
PLURAL = (
    "function plural(ms, msAbs, n, name) {\n"
    "  var isPlural = msAbs >= n * 1.5;\n"
    "  return Math.round(ms / n) + ' ' + name + (isPlural ? 's' : '');\n"
    "}\n"
)


@pytest.fixture(scope="module")
def minted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Minted]:
    """ms and camelcase minted into one batch, once a run (not once an xdist worker)."""

    def make(root: Path) -> dict[str, Minted]:
        batch = root / "batch"
        return {
            name: mint(f"{name} (javascript)", script_repo(root, name), batch)
            for name in EXPECTED_TASKS
        }

    return minted_all_once(tmp_path_factory, "javascript-ms-camelcase", make)


_table = funnel_table


def test_funnel_and_yield(minted: dict[str, Minted]) -> None:
    for name, made in minted.items():
        print(_table(made))
        assert made.stage("validated") == EXPECTED_TASKS[name], _table(made)
        assert not any("strength unmeasured" in note for note in made.funnel["setup_notes"])
    batch = Batch.open(next(iter(minted.values())).batch)
    assert {batch.spec(i).language for i in batch.ids} == {"javascript"}
    assert len(batch.ids) == sum(EXPECTED_TASKS.values())
    rates, generated = [], 0
    for ident in batch.ids:
        task = batch.load(ident)
        strength = task.hidden.strength
        assert strength is not None and strength.mutants > 0, ident  # measured, on real mutants
        widened = sum(1 for item in task.inputs if item.provenance == "widened")
        print(
            f"{ident}: {strength.killed}/{strength.mutants} mutants killed, "
            f"{widened} of {len(task.inputs)} hidden inputs widened"
        )
        generated += widened
        rates.append(strength.kill_rate)
        assert all(item.node_call is not None and not item.pickle_b64 for item in task.inputs)
        assert 'throw new Error("not implemented")' in task.prompt
        assert "```javascript" in task.prompt
    median = statistics.median(rates)
    print(f"JavaScript kill-rate median: {median:.2f} over {len(rates)} tasks")
    assert median >= KILL_RATE_MEDIAN
    assert generated > 0  # fast-check's calls, through the determinism gate, are hidden inputs


def _grade(batch: Path, ident: str, candidate: Path) -> dict[str, object]:
    done = replicate("grade", "--tasks", str(batch), "--task", ident, "--candidate", str(candidate))
    assert done.returncode == 0, done.stderr[-2000:]
    verdict: dict[str, object] = json.loads(done.stdout)
    return verdict


def test_the_reference_earns_1_and_the_stub_0_on_every_task(
    minted: dict[str, Minted], tmp_path: Path
) -> None:
    root = next(iter(minted.values())).batch
    batch = Batch.open(root)
    local = get_sandbox("local")
    for ident in batch.ids:
        task = batch.load(ident)
        original = tmp_path / f"{ident}.original.js"
        original.write_bytes(task.original_source())
        reference = _grade(root, ident, original)  # the CLI: a process each
        assert (reference["reward"], reference["status"]) == (1.0, "graded"), reference
        jail = Jail(context_for(task.repo, cache_root()), local)  # the same grade, in process
        stubbed = grade_text(task, task.stubbed_source().decode(), jail)
        assert (stubbed.reward, stubbed.status) == (0.0, "graded"), stubbed
        assert stubbed.counterexample is not None


def test_each_task_has_a_baseline_its_degenerate_programs_earn_nothing_over(
    minted: dict[str, Minted],
) -> None:
    """The baseline recorded at gen is what the degenerate programs earn graded as candidates
    are (`grade_text`: the verdict's raw share the same as gen's), and each earns at most
    `MAX_DEGENERATE_REWARD` once normalised; a table of the recorded calls is among them."""
    root = next(iter(minted.values())).batch
    batch = Batch.open(root)
    local = get_sandbox("local")
    for ident in batch.ids:
        task = batch.load(ident)
        found = task.hidden.baseline
        assert found is not None and found.programs, ident
        recorded = {p.program: p.raw_reward for p in found.programs}
        print(
            f"{ident}: baseline {found.raw_reward:.3f}; "
            + ", ".join(f"{name} {raw:.3f}" for name, raw in list(recorded.items())[:4])
        )
        assert found.raw_reward == max(recorded.values()) < MAX_CONSTANT_BASELINE
        assert any(name.startswith(VISIBLE) for name in recorded)
        jail = Jail(context_for(task.repo, cache_root()), local)
        for program in javascript_baseline.programs(task):
            body = families.program_file(task.stubbed_source(), task.hidden.target, program.body)
            verdict = grade_text(task, body.decode(), jail)
            raw = pytest.approx(recorded[program.name], abs=1e-6)
            assert verdict.raw_reward == raw, (ident, program.name)
            assert verdict.reward is not None, (ident, program.name, verdict)
            assert verdict.reward <= MAX_DEGENERATE_REWARD, (ident, program.name, verdict)


def test_a_candidate_that_does_not_parse_earns_0_with_its_reason(
    minted: dict[str, Minted], tmp_path: Path
) -> None:
    root = minted["ms"].batch
    ident = Batch.open(root).resolve("index.plural")
    broken = tmp_path / "broken.js"
    broken.write_text("function plural(ms, msAbs, n, name) {\n  return (\n}\n")
    verdict = _grade(root, ident, broken)
    assert verdict["reward"] == 0.0
    assert "does not parse" in str(verdict["reason"])


def test_run_scores_an_agent_on_javascript_tasks(minted: dict[str, Minted], tmp_path: Path) -> None:
    root = minted["ms"].batch
    shown = tmp_path / "agent"
    shown.mkdir()
    (shown / "plural.js").write_text(PLURAL)
    # the agent writes plural as a bare definition in its target file, leaves the rest stubbed
    agent = (
        f'if [ "$REPLICATE_TARGET" = index.plural ]; then cat {shown}/plural.js '
        '> "$REPLICATE_TARGET_FILE"; fi'
    )
    out = tmp_path / "run"
    args = ("--tasks", str(root), "--agent", agent, "--out", str(out), "--mount", str(shown))
    done = replicate("run", *args, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {row["task_id"]: row for row in json.loads(done.stdout)["rows"]}
    plural = Batch.open(root).resolve("index.plural")
    assert rows[plural]["reward"] == 1.0, rows[plural]
    others = [row for ident, row in rows.items() if ident != plural]
    assert len(others) == sum(EXPECTED_TASKS.values()) - 1
    assert all(row["reward"] == 0.0 and row["status"] == "graded" for row in others)


def test_rows_exported_and_scored_by_verls_reward_function(
    minted: dict[str, Minted], tmp_path: Path
) -> None:
    root = minted["ms"].batch
    out = tmp_path / "rows"
    done = replicate("export", "--tasks", str(root), "--format", "rows", "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines()]
    (row,) = [r for r in rows if r["extra_info"]["symbol"] == "index.plural"]
    message = row["prompt"][-1]["content"]
    assert "```javascript" in message and "NotImplementedError" not in message
    truth, info = row["reward_model"]["ground_truth"], row["extra_info"]
    try:
        right = compute_score("replicate", f"Here:\n```javascript\n{PLURAL}```\n", truth, info)
        assert (right["score"], right["infra_error"]) == (1.0, False)
        wrong = "function plural(ms, msAbs, n, name) { return name; }"
        assert compute_score("replicate", wrong, truth, info)["score"] == 0.0
    finally:
        close_graders()
