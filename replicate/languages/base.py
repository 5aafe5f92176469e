"""The one-adapter-per-language interface: discover targets, stub a body, splice a candidate."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from replicate.core import SkippedFile, Target, Token


@dataclass(frozen=True)
class Extraction:
    """What discovery found in one source tree.

    `source_roots` are repo-relative POSIX dirs to put on `sys.path` ("." or "src");
    `python_files` counts the source files considered (skipped ones included): importable Python
    modules, or a JavaScript/TypeScript tree's source files (the name predates other languages).
    """

    targets: tuple[Target, ...]
    skipped_files: tuple[SkippedFile, ...]
    source_roots: tuple[str, ...]
    python_files: int

    @classmethod
    def of(
        cls, outcomes: Iterable[list[Target] | SkippedFile], source_roots: tuple[str, ...]
    ) -> Extraction:
        """The extraction of one outcome per source file: its targets, or why it was skipped."""
        targets: list[Target] = []
        skipped: list[SkippedFile] = []
        files = 0
        for outcome in outcomes:
            files += 1
            if isinstance(outcome, SkippedFile):
                skipped.append(outcome)
            else:
                targets.extend(outcome)
        return cls(tuple(targets), tuple(skipped), source_roots, files)


@runtime_checkable
class Language(Protocol):
    """A language adapter. Implementations hold no state beyond lazily built parsers."""

    name: str

    def discover(self, root: Path) -> Extraction:
        """Every target in the checked-out source tree at `root`; never raises for one bad file."""
        ...

    def stub(self, source: bytes, target: Target) -> bytes:
        """`source` with only the target's body replaced by a stub that raises."""
        ...

    def stub_bodies(self, source: bytes, target: Target, others: tuple[Target, ...]) -> bytes:
        """`source` with the target's body and those of `others` (other targets of the same
        file) stubbed, their signatures and docstrings kept: a prompt that shows the file without
        other tasks' hidden bodies (`replicate export --context signatures`)."""
        ...

    def outline(self, source: bytes, target: Target) -> bytes:
        """The part of `source` (the target's original file) around the target, the target
        stubbed: the module's statements that are not definitions and the top-level definition
        that holds the target; the rest left out, each run marked with the lines it spans in
        `source` (`replicate export --context class`)."""
        ...

    def splice(
        self, stubbed: bytes, candidate_text: str, target: Target, *, check: bool = True
    ) -> bytes:
        """The target file after putting a candidate into the stubbed file (docs/design.md §1).
        Without `check`, a file that does not compile is not refused here (a `SpliceError`) but
        by the jail, where its import fails: gen's mutants, whose whole-file compile was most of
        their splicing's cost on a large module."""
        ...

    def literals(self, root: Path) -> frozenset[str]:
        """The short string literals the library's own source at `root` spells (its tests left
        out): keys and names that are the library's protocol, never a user's data (gen does not
        rename them, `replicate.inputs.renaming`)."""
        ...

    def replace_definition(self, source: bytes, definition: str, target: Target) -> bytes | None:
        """`source` (the original file) with the target's definition replaced by `definition`
        (gen's mutants) and padded to the original's line count, as `splice` into the stubbed
        file would place it, but cheaply; None where the adapter cannot tell (gen splices)."""
        ...

    def body_tokens(
        self, source: bytes, target: Target, stubbed: bytes | None = None
    ) -> tuple[Token, ...] | None:
        """The kinded tokens of the target's body (docstring, comments and layout left out) in
        `source`: the original file, or with `stubbed` a candidate spliced into that stubbed
        file; None where `source` holds no such definition.  The core compares them
        (`replicate.core.copying.recall`)."""
        ...
