"""The batch manifest: the sha256 of every file of a batch, written by `replicate gen`.

    DIR/reference_impls/manifest.json   {"format": ..., "files": {"specs/<id>/task.json": ...}}

A batch travels between labs, so a reader checks it before acting on it: a file changed, added or
removed after minting makes the batch refused (`--no-verify` trusts it as it is).  Each entry is
keyed by the file's batch-relative POSIX path; its value is `sha256:<hex>` for a regular file and
`symlink:<hex>` (the sha256 of the link's text) for a symlink, which is never followed.  Checks
are scoped: loading one task hashes only that task's folders and its repository's snapshot.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from replicate import confined
from replicate.errors import ReplicateError

MANIFEST = "reference_impls/manifest.json"
COVERED = ("specs", "reference_impls")  # the batch's two halves; the manifest covers both
_CHUNK = 1 << 20


class Manifest(BaseModel):
    """What `replicate gen` wrote: every file of the batch and its hash."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal["replicate-manifest/1"] = "replicate-manifest/1"
    files: dict[str, str]

    def under(self, prefix: str) -> dict[str, str]:
        return {path: digest for path, digest in self.files.items() if path.startswith(prefix)}


def file_digest(path: Path) -> str:
    """`sha256:<hex>` of a regular file, `symlink:<hex>` of a symlink's text."""
    if path.is_symlink():
        return "symlink:" + hashlib.sha256(os.fsencode(os.readlink(path))).hexdigest()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def batch_files(root: Path, prefix: str) -> Iterator[str]:
    """Batch-relative paths of the files (and symlinks) under `root/prefix`, the manifest aside."""
    top = root / prefix
    if top.is_symlink() or not top.is_dir():
        if top.is_symlink() or top.is_file():
            yield prefix.rstrip("/")
        return
    for folder, dirs, files in os.walk(top):
        here = Path(folder)
        linked = [d for d in dirs if (here / d).is_symlink()]  # os.walk does not descend them
        for name in (*files, *linked):
            rel = (here / name).relative_to(root).as_posix()
            if rel != MANIFEST:
                yield rel


def compute(root: Path) -> Manifest:
    files = {
        rel: file_digest(root / rel) for top in COVERED for rel in sorted(batch_files(root, top))
    }
    return Manifest(files=files)


def write_manifest(root: Path) -> Path:
    """Hash every file of the batch at `root` and write the manifest (atomically)."""
    path = root / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(compute(root).model_dump_json(indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_manifest(root: Path) -> Manifest:
    path = root / MANIFEST
    try:
        return Manifest.model_validate_json(confined.read_bytes(root, MANIFEST))
    except FileNotFoundError:
        raise ReplicateError(
            f"{root} has no manifest ({MANIFEST}): it was not written by this version of "
            "`replicate gen`; re-mint it, or pass --no-verify to trust it as it is"
        ) from None
    except (OSError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise ReplicateError(f"{path} is not a batch manifest: {first}") from None


def differences(root: Path, manifest: Manifest, prefix: str) -> list[str]:
    """What differs between the batch's files under `prefix` and the manifest, one line each."""
    recorded = manifest.under(prefix)
    present = set(batch_files(root, prefix))
    found = [f"{rel} was added after minting" for rel in sorted(present - recorded.keys())]
    found += [f"{rel} is missing" for rel in sorted(recorded.keys() - present)]
    for rel in sorted(present & recorded.keys()):
        if file_digest(root / rel) != recorded[rel]:
            found.append(f"{rel} changed after minting")
    return found
