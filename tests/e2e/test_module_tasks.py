"""Module tasks (task kind `module`) minted from boltons 24.1.0, the session's `boltons` batch (its
first function and method tasks, `BOLTONS_LIMIT`): the files found and the module tasks minted
from them (the yield), the reference file earning 1.0 and the stub 0.0 on every module task, the
file whose every body returns None under the floor, the members' mutants pooled at today's
kill-rate floor, its call sequences exactly its file's class tasks'; `grade` and `run` (with
`--repo-tests`: the test files that import the module) take them."""

from __future__ import annotations

import json
from pathlib import Path

from replicate.batch.store import Batch, LoadedTask
from replicate.core import TaskKind, Verdict
from replicate.gen.modules import EVERY_BODY_NONE, MIN_MODULE_MEMBERS
from replicate.gen.strength import DEFAULT_MIN_KILL_RATE
from replicate.grading import original_source
from replicate.grading.modules import module_test_ids
from replicate.grading.repo_tests import MAX_NODE_IDS, node_ids
from replicate.grading.reward import MAX_DEGENERATE_REWARD, normalise
from replicate.languages.python import discover_python
from tests.e2e.conftest import Minted, replicate
from tests.e2e.test_class_tasks import _grades
from tests.e2e.test_degenerate import read_rows

MIN_MODULE_TASKS = 1  # boltons' first tasks fill cacheutils.py at least


def _module_ids(batch: Batch) -> list[str]:
    return [i for i in batch.ids if batch.spec(i).task_kind is TaskKind.MODULE]


def _check_assembly(task: LoadedTask) -> None:
    target = task.hidden.target
    assert task.spec.kind == "module" and f"__module.{target.symbol}__" in task.id
    graded = {item.member for item in task.inputs}
    assert len(graded) >= MIN_MODULE_MEMBERS, graded
    assert graded <= {m.qualname for m in target.members}
    assert all(m.signature.strip() in task.prompt for m in target.members)
    baseline, strength = task.hidden.baseline, task.hidden.strength
    assert baseline is not None and baseline.raw_reward < 1.0
    (none,) = [p for p in baseline.programs if p.program == EVERY_BODY_NONE]
    assert normalise(none.raw_reward, baseline.raw_reward) <= MAX_DEGENERATE_REWARD
    assert strength is not None and strength.mutants > 0
    assert strength.kill_rate >= DEFAULT_MIN_KILL_RATE, strength


def test_module_tasks_mint_and_the_reference_earns_one_and_the_stub_zero(boltons: Minted) -> None:
    batch = Batch.open(boltons.batch)
    ids = _module_ids(batch)
    found = discover_python(boltons.repo).modules
    ledger = [json.loads(line) for line in (boltons.batch / "funnel.jsonl").open()]
    symbols = {m.symbol for m in found}
    decided = [e for e in ledger if e["symbol"] in symbols]
    tasks = [batch.load(i) for i in ids]
    print(
        json.dumps(
            {
                "library": boltons.name,
                "files_found": len(found),
                "files_decided": len(decided),  # the others: members --limit left undecided
                "module_tasks_minted": len(ids),
                "yield_of_found": round(len(ids) / len(found), 3),
                "members_graded": [len({i.member for i in t.inputs}) for t in tasks],
                "kill_rates": [t.hidden.strength and t.hidden.strength.kill_rate for t in tasks],
                "drops": sorted({e["reason"] for e in decided if not e["kept"]}),
            }
        )
    )
    assert len(ids) >= MIN_MODULE_TASKS, ids
    # a file whose functions `--limit` left undecided is not decided (a later run mints it)
    assert 0 < len(decided) <= len(found)
    classes = [batch.load(i) for i in batch.ids if batch.spec(i).task_kind is TaskKind.CLASS]
    for task in tasks:
        _check_assembly(task)
        # its call sequences are exactly those of its file's class tasks, in class order
        path = task.hidden.target.path
        same = sorted(
            (c for c in classes if c.hidden.target.path == path),
            key=lambda c: c.hidden.target.qualname,
        )
        assert [h.sequence for h in task.sequences] == [
            h.sequence for c in same for h in c.sequences
        ]
    assert any(task.sequences for task in tasks)  # cacheutils' LRI, at least
    bad = [
        f"{ident}: reference {ref.reward} ({ref.reason}), stub {stub.reward} ({stub.reason})"
        for ident, ref, stub in _grades(tasks)
        if (ref.status, ref.reward, stub.status, stub.reward) != ("graded", 1.0, "graded", 0.0)
    ]
    assert not bad, "\n".join(bad)


def test_grade_and_run_take_module_tasks(boltons: Minted, tmp_path: Path) -> None:
    """`grade` the reference file (1.0); `run` an agent that writes it into its workspace, with
    `--repo-tests`: 1.0 on each module task, the tests that import the module reported beside."""
    batch = Batch.open(boltons.batch)
    ids = _module_ids(batch)[:1]
    originals = tmp_path / "originals"
    originals.mkdir()
    for ident in ids:
        (originals / f"{ident}.py").write_bytes(original_source(batch.load(ident)))
    done = replicate(
        "grade", "--tasks", str(boltons.batch), "--task", ids[0],
        "--candidate", str(originals / f"{ids[0]}.py"), timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    verdict = Verdict.model_validate_json(done.stdout)
    assert (verdict.status, verdict.reward) == ("graded", 1.0), verdict.reason
    run = tmp_path / "run"
    agent = f'cp {originals}/"$REPLICATE_TASK_ID".py "$REPLICATE_TARGET_FILE"'
    selection = [arg for ident in ids for arg in ("--task", ident)]
    done = replicate(
        "run", "--tasks", str(boltons.batch), "--agent", agent, "--out", str(run),
        "--mount", str(originals), "--repo-tests", *selection, timeout=1200,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    rows = read_rows(run)
    assert sorted(r.task_id for r in rows) == sorted(ids)
    for row in rows:
        assert (row.status, row.reward) == ("graded", 1.0), row.reason
        found = row.verdict.repo_tests if row.verdict else None
        assert found is not None and found.selected > 0 and found.passed > 0, found
        test_files = [i for i in _selected(batch.load(row.task_id), boltons.repo) if "::" not in i]
        assert test_files, row.task_id  # whole test files that import the module among them


def _selected(task: LoadedTask, tree: Path) -> tuple[str, ...]:
    return module_test_ids(tree, task.hidden.target, node_ids(task.inputs), MAX_NODE_IDS)
