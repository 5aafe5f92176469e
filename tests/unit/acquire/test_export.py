"""export_tree(): byte-exact files, exec bits, symlinks kept only inside the tree."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from replicate.acquire import acquire, export_tree


def test_links_inside_kept_outside_dropped_and_no_attributes(
    tmp_path: Path, gitcmd: Callable[..., str]
) -> None:
    repo_dir = tmp_path / "links"
    (repo_dir / "sub").mkdir(parents=True)
    (repo_dir / "sub" / "data.txt").write_text("data\n")
    os.symlink("sub/data.txt", repo_dir / "inside")
    os.symlink("sub", repo_dir / "dirlink")
    os.symlink("/etc/passwd", repo_dir / "absolute")
    os.symlink("../../outside", repo_dir / "sub" / "escape")
    os.symlink(".", repo_dir / "self")
    os.symlink("self/..", repo_dir / "chain")  # lexically inside, really the parent folder
    (repo_dir / ".gitattributes").write_text("version.txt export-subst\n* text=auto eol=crlf\n")
    (repo_dir / "version.txt").write_text("$Format:%H$\n")
    gitcmd(repo_dir, "init", "-q")
    gitcmd(repo_dir, "add", ".")
    gitcmd(repo_dir, "commit", "-q", "-m", "links")
    out = tmp_path / "out"
    export_tree(acquire(str(repo_dir), None, tmp_path / "cache"), out)
    assert os.readlink(out / "inside") == "sub/data.txt"
    assert (out / "inside").read_text() == "data\n"
    assert os.readlink(out / "dirlink") == "sub"
    assert os.readlink(out / "self") == "."
    for dropped in ("absolute", "sub/escape", "chain"):
        assert not os.path.lexists(out / dropped), dropped
    # stored bytes, not what `git archive` or a checkout with attributes would write
    assert (out / "version.txt").read_bytes() == b"$Format:%H$\n"
    assert (out / "sub" / "data.txt").read_bytes() == b"data\n"
