"""`replicate report` on a real small run of the tiny batch: plots, task table, nothing fetched,
untrusted text escaped, two runs compared, one-line errors."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from replicate.agents.protocol import AgentConfig
from replicate.batch.difficulty_file import choose, read_difficulty
from replicate.batch.store import Batch
from replicate.cli.main import main
from replicate.errors import ReplicateError
from replicate.grading.grader import original_source
from replicate.sandbox import get_sandbox
from replicate.scoring.batch_run import RunOptions, run_batch
from replicate.scoring.report import build_page, render, write_report
from replicate.scoring.results import RESULTS_FILE
from tests.integration.minted import SYMBOLS, Tiny

CLAMP = "tinypkg.core.clamp"
PLANTED = "<script>alert('owned')</script>"
RESOURCE = re.compile(  # a reference to anything outside the page
    r"""(?:src|href|action|data)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?(?:https?:)?//|@import""",
    re.I,
)
IMAGE = re.compile(r'<img alt="[^"]+" src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"')


@pytest.fixture(scope="module")
def run_dir(tiny: Tiny, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two samples per task: the agent writes the original clamp and leaves the rest stubbed."""
    answers = tmp_path_factory.mktemp("answers")
    (answers / "core.py").write_bytes(original_source(tiny.task(CLAMP)))
    answer = shlex.quote(str(answers / "core.py"))
    command = f'if [ "$REPLICATE_TARGET" = {CLAMP} ]; then cp {answer} "$REPLICATE_TARGET_FILE"; fi'
    out = tmp_path_factory.mktemp("run") / "run"
    agent = AgentConfig(command, get_sandbox("local"), timeout_s=60, mounts=(str(answers),))
    options = RunOptions(
        tasks=tiny.batch_dir, out=out, agent=agent, sandbox_name="local", workers=2, samples=2
    )
    summary = run_batch(options)
    assert {r.reward for r in summary.rows} == {0.0, 1.0}, [r.reason for r in summary.rows]
    return out


def test_the_report_has_plots_tasks_and_fetches_nothing(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    page = write_report(run_dir, out)
    html = out.read_text(encoding="utf-8")
    assert len(IMAGE.findall(html)) == 5  # histogram, pass@k, by repository, by difficulty, copy
    assert "Mean reward by difficulty" in html and "Reward against copy of the original" in html
    assert not RESOURCE.search(html)
    assert "http://" not in html and "https://" not in html
    table = html.split('<table class="tasks">')[1].split("</table>")[0]
    assert all(symbol in table for symbol in SYMBOLS)
    assert "<th>pass@2</th>" in table
    assert page.pass_at == (0.25, 0.25) and page.mean_reward == 0.25
    assert len(page.tasks) == 4 and all(len(t.attempts) == 2 for t in page.tasks)
    clamp = next(t for t in page.tasks if t.symbol == CLAMP)
    assert clamp.stats.pass_at == (1.0, 1.0) and clamp.repo == "tinypkg"
    # the memorisation signal: the original pasted back is all original, the stubs nothing
    assert clamp.copy == 1.0 and all(a.row.copy_share == 1.0 for a in clamp.attempts)
    assert {t.copy for t in page.tasks if t.symbol != CLAMP} == {0.0}
    assert page.mean_copy == 0.25 and "copy of original</th>" in table
    assert "copy of the original 1.000 (longest shared run" in html
    other = next(t for t in page.tasks if t.symbol != CLAMP)
    failed = other.attempts[0]
    assert failed.diff is not None and failed.diff == ""  # the agent left the stub as it was
    assert failed.row.verdict.counterexample is not None
    assert "Counterexample" in html and "expected: " in html
    assert clamp.difficulty is not None and clamp.difficulty.complexity == 3
    assert html.count('<p class="meta difficulty">') == 4 and "kill rate" in table
    assert "raise NotImplementedError" in html or "NotImplementedError" in html


def test_untrusted_text_is_escaped_and_a_torn_line_skipped(run_dir: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(run_dir, tmp_path / "run"))
    lines = (copy / RESULTS_FILE).read_text().splitlines()
    row = json.loads(lines[0])
    row.update(task_id=f"x{PLANTED}", reason=PLANTED, sample=0)
    row["verdict"]["task_id"] = row["task_id"]
    with (copy / RESULTS_FILE).open("a") as handle:
        handle.write(json.dumps(row) + "\n" + '{"task_id": "cut sh')  # and a torn last line
    real = json.loads(lines[1])
    path = copy / "transcripts" / real["task_id"] / f"{real['sample']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"messages": [{"role": "assistant", "content": PLANTED}]}))
    page = build_page(copy)
    assert page.run.torn == 1 and len(page.run.rows) == len(lines) + 1
    html = render(page)
    assert "torn lines skipped" in html
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in html
    assert html.count("&lt;script&gt;") >= 3  # the id, the reason, the transcript


def test_compare_shows_what_improved_and_regressed(run_dir: Path, tmp_path: Path) -> None:
    worse = Path(shutil.copytree(run_dir, tmp_path / "worse"))
    rows = [json.loads(line) for line in (worse / RESULTS_FILE).read_text().splitlines()]
    for row in rows:
        row["reward"] = 0.0 if row["reward"] == 1.0 else 0.5
    (worse / RESULTS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    page = build_page(run_dir, worse)
    verdicts = {c.symbol: c.verdict for c in page.changes}
    assert verdicts[CLAMP] == "improved"
    assert [verdicts[s] for s in SYMBOLS if s != CLAMP] == ["regressed"] * 3
    html = " ".join(render(page).split())
    assert "1 improved, 3 regressed, 0 unchanged" in html


def test_the_cli_writes_the_page_and_refuses_a_folder_without_rows(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "page.html"
    assert main(["report", str(run_dir), "--compare", str(run_dir), "--out", str(out)]) == 0
    assert "0 regressed, 4 unchanged" in " ".join(out.read_text().split())
    capsys.readouterr()
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "no results.jsonl" in err and "\n" not in err
    for missing in (["report", str(tmp_path / "gone")], ["report", str(run_dir), "--compare", "x"]):
        assert main(missing) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: no such run directory:") and "\n" not in err


def test_solve_rates_written_back_and_chosen_by(
    run_dir: Path, tiny: Tiny, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report --write-solve-rate` records what the run saw (clamp solved in both samples, the
    others in none) next to each task's difficulty; `--max-solve-rate` then chooses by it."""
    batch_dir = tiny.copy_batch(tmp_path / "batch")
    run = tmp_path / "run"
    shutil.copytree(run_dir, run)
    identity = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**identity, "tasks": str(batch_dir)}))
    batch = Batch.open(batch_dir)
    with pytest.raises(ReplicateError, match="no solve rates are recorded"):
        choose(batch, max_solve_rate=0.5)
    assert main(["report", str(run), "--write-solve-rate"]) == 0
    assert "solve rates of 4 task(s) recorded" in capsys.readouterr().err
    written = read_difficulty(batch_dir)
    assert written is not None
    solved = {i: e.solve for i, e in written.tasks.items()}
    clamp = tiny.id_of(CLAMP)
    for ident, solve in solved.items():
        assert solve is not None and solve.attempts == 2 and solve.run == str(run)
        expected = 1.0 if ident == clamp else 0.0
        assert (solve.pass_rate, solve.mean_reward, solve.successes) == (
            expected,
            expected,
            2 * expected,
        )
    assert set(choose(batch, max_solve_rate=0.5)) == set(tiny.task_ids) - {clamp}
    assert choose(batch, max_solve_rate=1.0) == batch.ids
    with pytest.raises(ReplicateError, match=r"is left by --max-solve-rate 0\.5"):
        choose(batch, [clamp], max_solve_rate=0.5)  # solved: nothing left
