"""The `--repos` file: one source a line (a git URL, a local path, `pypi:NAME==VERSION` or
`npm:NAME@VERSION`), an optional `@commit` (not for a PyPI or npm source: its version pins it),
`#` comments and blank lines."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from replicate.acquire import is_npm_spec, is_pypi_spec, is_remote_spec, parse_npm_pin, parse_pin
from replicate.errors import ReplicateError

_COMMENT = re.compile(r"(^|\s)#.*$")
_REV = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # a sha, a tag, a branch: no `/`, `:` or `@`


@dataclass(frozen=True)
class Source:
    """One line of the file: `text` as written (the ledger's key), the repository `spec` and
    the revision to pin (None: HEAD)."""

    text: str
    spec: str
    commit: str | None


def read_sources(path: Path) -> tuple[Source, ...]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReplicateError(f"cannot read {path}: {exc}") from exc
    sources = parse_sources(text, path.resolve().parent)
    if not sources:
        raise ReplicateError(
            f"{path} names no repository (one URL, path, pypi:NAME==VERSION or npm:NAME@VERSION "
            "a line)"
        )
    return sources


def parse_sources(text: str, base: Path) -> tuple[Source, ...]:
    """The sources of a `--repos` file whose relative paths are relative to `base`."""
    found: dict[tuple[str, str | None], Source] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", raw).strip()
        if not line:
            continue
        if len(line.split()) > 1:
            raise ReplicateError(f"line {number}: one source a line, not {line!r}")
        source = parse_source(line, base)
        if (source.spec, source.commit) in found:
            raise ReplicateError(f"line {number}: {line} is listed twice")
        found[source.spec, source.commit] = source
    return tuple(found.values())


def parse_source(line: str, base: Path) -> Source:
    if is_npm_spec(line):  # its `@` is the version's: a malformed pin is an error of the file
        parse_npm_pin(line)
        return Source(text=line, spec=line, commit=None)
    spec, commit = _split_commit(line)
    if is_pypi_spec(spec):
        parse_pin(spec)  # a malformed pin is an error of the file, not of one repository
        if commit is not None:
            raise ReplicateError(f"{line}: a PyPI source is pinned by its version, not @commit")
    elif not is_remote_spec(spec):
        spec = os.path.abspath(base / Path(spec).expanduser())
    return Source(text=line, spec=spec, commit=commit)


def _split_commit(line: str) -> tuple[str, str | None]:
    """`spec@rev` -> (spec, rev); an `@` inside an address (`git@host:a/b`) is not a revision."""
    head, at, rev = line.rpartition("@")
    if not at or not head or not _REV.match(rev) or head.endswith(("/", ":")):
        return line, None
    return head, rev
