"""`replicate gen --repos` for real over two repositories whose folders are both named `src` (and
whose metadata names them both `tinypkg`: two different projects of one name) and `/`: both
minted, with distinct task ids and a card row each; `/` is its own set-up failure. And
`gen --repo /` alone: one line, no traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replicate.batch.store import Batch
from tests.integration.minted import FILES, git, make_git_repo, run_cli

CHEAP = ("--limit", "1", "--no-strength", "--workers", "2", "--json")


def gen_repos(tmp_path: Path, lines: list[str], *extra: str) -> tuple[dict[str, Any], str]:
    """`gen --repos` of `lines` into tmp_path/batch: the card (with `skipped`) and stderr."""
    repos = tmp_path / "repos.txt"
    repos.write_text("".join(f"{line}\n" for line in lines))
    out = tmp_path / "batch"
    done = run_cli("gen", "--repos", str(repos), "--out", str(out), *CHEAP, *extra, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout), done.stderr


def test_two_repositories_of_one_name_are_both_minted(tmp_path: Path) -> None:
    one = make_git_repo(tmp_path / "one" / "src", FILES)
    two = make_git_repo(tmp_path / "two" / "src", {**FILES, "README.md": "the other one\n"})
    card, stderr = gen_repos(tmp_path, [str(one), "/", str(two)])
    assert "Traceback" not in stderr
    rows = {row["source"]: row for row in card["repositories"]}
    assert list(rows) == [str(one), "/", str(two)]
    assert rows["/"]["status"] == "failed"
    assert rows["/"]["failure"] == (
        "set-up: cannot snapshot /: the file system's root is not a repository"
    )
    first, second = rows[str(one)], rows[str(two)]
    assert first["status"] == second["status"] == "minted", card
    assert first["tasks"] == second["tasks"] == 1
    root = git(two, "rev-list", "--max-parents=0", "HEAD")
    assert (first["key"], second["key"]) == ("tinypkg", f"tinypkg-{root[:8]}")
    assert second["origin"] == f"root:{root}"
    out = tmp_path / "batch"
    ids = Batch.open(out).ids
    assert len(ids) == 2
    assert sorted(i.split("__")[0] for i in ids) == ["tinypkg", f"tinypkg-{root[:8]}"]
    card = (out / "CARD.md").read_text()
    assert f"| tinypkg-{root[:8]} |" in card and "| tinypkg |" in card


def test_gen_of_the_root_folder_is_one_line(tmp_path: Path) -> None:
    done = run_cli("gen", "--repo", "/", "--out", str(tmp_path / "batch"), timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "error: cannot snapshot /: the file system's root is not a repository"
    )
    assert "Traceback" not in done.stderr


def test_two_commits_sit_beside_each_other_until_replace(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "proj", FILES)
    first = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("a second commit\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    lines = [f"{repo}@{first}", str(repo)]
    old, new = gen_repos(tmp_path, lines)[0]["repositories"]
    assert old["status"] == new["status"] == "minted"
    assert old["key"] == new["key"] == "tinypkg" and old["commit"] == first != new["commit"]
    out = tmp_path / "batch"
    beside = Batch.open(out).ids
    assert len(beside) == 2  # one task of each commit, distinct ids

    card = gen_repos(tmp_path, lines, "--replace")[0]
    old, new = card["repositories"]
    assert old["failure"] == f"set-up: replaced by {repo} (--replace: one commit per repository)"
    assert card["skipped"] == [str(repo)]  # minted already: not minted again
    kept = Batch.open(out).ids
    assert len(kept) == 1 and set(kept) < set(beside)
    ledger = (out / "funnel.jsonl").read_text()
    assert first not in ledger and new["commit"] in ledger
