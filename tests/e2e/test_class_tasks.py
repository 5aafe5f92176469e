"""Class tasks (task kind `class`) minted from boltons 24.1.0, the session's `boltons` batch (its
first method tasks, `BOLTONS_LIMIT`): the classes found and the class tasks minted from them,
the reference class earning 1.0 and the stub 0.0 on every class task, graded as `replicate grade`
grades; `export --kinds class` takes exactly those."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from replicate.batch.store import Batch, LoadedTask
from replicate.cache import cache_root
from replicate.core import TaskKind, Verdict
from replicate.gen.class_families import EVERY_NONE
from replicate.gen.classes import MIN_GRADED_MEMBERS
from replicate.grading import grade_text, original_source, stubbed_source
from replicate.jail import Jail
from replicate.jail.context import context_for
from replicate.languages.python import discover_python
from replicate.sandbox import get_sandbox
from tests.e2e.conftest import Minted, replicate

MIN_CLASS_TASKS = 3  # boltons' first method tasks hold LRI, ThresholdCounter, OrderedMultiDict...


def _class_ids(batch: Batch) -> list[str]:
    return [i for i in batch.ids if batch.spec(i).task_kind is TaskKind.CLASS]


def _grades(tasks: list[LoadedTask]) -> list[tuple[str, Verdict, Verdict]]:
    """Each task's reference and stub, graded as candidates."""
    sandbox = get_sandbox("local")
    context = context_for(tasks[0].repo, cache_root())

    def both(task: LoadedTask) -> tuple[str, Verdict, Verdict]:
        jail = Jail(context, sandbox)
        reference = grade_text(task, original_source(task).decode("utf-8"), jail, shrink=False)
        stub = grade_text(task, stubbed_source(task).decode("utf-8"), jail, shrink=False)
        return task.id, reference, stub

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(both, tasks))


def test_class_tasks_mint_and_the_reference_earns_one_and_the_stub_zero(boltons: Minted) -> None:
    batch = Batch.open(boltons.batch)
    ids = _class_ids(batch)
    found = discover_python(boltons.repo).classes
    ledger = [json.loads(line) for line in (boltons.batch / "funnel.jsonl").open()]
    symbols = {c.symbol for c in found}
    decided = [e for e in ledger if e["symbol"] in symbols]
    print(
        json.dumps(
            {
                "library": boltons.name,
                "classes_found": len(found),
                "classes_decided": len(decided),
                "class_tasks_minted": len(ids),
                "yield_of_found": round(len(ids) / len(found), 3),
                "drops": sorted({e["reason"] for e in decided if not e["kept"]}),
            }
        )
    )
    assert len(ids) >= MIN_CLASS_TASKS, ids
    tasks = [batch.load(i) for i in ids]
    for task in tasks:
        target = task.hidden.target
        assert task.spec.kind == "class" and f"__class.{target.symbol}__" in task.id
        graded = {item.member for item in task.inputs}
        assert len(graded) >= MIN_GRADED_MEMBERS
        assert graded <= {m.qualname for m in target.members}
        assert all(f"`{m.name}`" in task.prompt for m in target.members)
        baseline = task.hidden.baseline  # the every-None class graded at gen, under the baseline
        assert baseline is not None and baseline.raw_reward < 1.0
        (none,) = [p for p in baseline.programs if p.program == EVERY_NONE]
        assert none.raw_reward <= baseline.raw_reward
    bad = [
        f"{ident}: reference {ref.reward} ({ref.reason}), stub {stub.reward} ({stub.reason})"
        for ident, ref, stub in _grades(tasks)
        if (ref.status, ref.reward, stub.status, stub.reward) != ("graded", 1.0, "graded", 0.0)
    ]
    assert not bad, "\n".join(bad)


def test_export_takes_the_class_tasks_by_kind(boltons: Minted, tmp_path: Path) -> None:
    batch = Batch.open(boltons.batch)
    out = tmp_path / "rows"
    done = replicate(
        "export", "--tasks", str(boltons.batch), "--format", "rows", "--out", str(out),
        "--kinds", "class", "--json", timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.with_suffix(".jsonl").open()]
    assert sorted(row["task_id"] for row in rows) == sorted(_class_ids(batch))
    refused = replicate("export", "--tasks", str(boltons.batch), "--out", str(out), "--kinds", "x")
    assert refused.returncode == 2 and "unknown task kind 'x'" in refused.stderr
    assert "Traceback" not in refused.stderr
