"""The one-adapter-per-language interface: discover targets, stub a body, splice a candidate.

The contract a new language's adapter keeps (docs/seams.md lists what else a language needs):

- Registered by name in `replicate.languages._REGISTRY` ("module:Class"); `get_language(name)`
  builds it with no arguments, lazily, and a task records the name (`TaskSpec.language`, today
  `Literal["python"]`: a new language widens it), so
  every later stage (export, grade, run, serve) builds the same adapter from the batch alone.
- Every method but `discover` and `literals` is a pure function of its arguments: bytes and a
  `Target` in, bytes (or tokens, or None) out, the same for the same arguments in any process.
  Gen writes what they return into the batch, so a change in their output changes the batch.
- An adapter never runs the repository's code or a candidate, never imports them, starts no
  process and opens no network connection: it reads and rewrites text. Running is the jail's
  (`replicate.jail`); `discover` and `literals` only read files under `root`.
- A `Target`'s spans are byte offsets into the original file as read from disk (no decoding,
  no newline translation); `stub`, `splice` and `replace_definition` keep every byte outside
  the target's definition as it was, so line numbers in tracebacks agree across programs.
- A candidate that cannot be put in place raises `replicate.core.SpliceError` (a one-line
  reason for the verdict), never anything else; a candidate is untrusted text and may be any
  string up to `replicate.core.MAX_CANDIDATE_BYTES`.
"""

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
    `source_files` counts the source files considered (skipped ones included): importable Python
    modules, or a JavaScript/TypeScript tree's source files.
    """

    targets: tuple[Target, ...]
    skipped_files: tuple[SkippedFile, ...]
    source_roots: tuple[str, ...]
    source_files: int
    classes: tuple[Target, ...] = ()  # class targets (task kind `class`), apart from `targets`
    modules: tuple[Target, ...] = ()  # module targets (task kind `module`), one per file at most

    @classmethod
    def of(
        cls, outcomes: Iterable[list[Target] | SkippedFile], source_roots: tuple[str, ...]
    ) -> Extraction:
        """The extraction of one outcome per source file: its targets, or why it was skipped."""
        targets: list[Target] = []
        classes: list[Target] = []
        modules: list[Target] = []
        skipped: list[SkippedFile] = []
        files = 0
        for outcome in outcomes:
            files += 1
            if isinstance(outcome, SkippedFile):
                skipped.append(outcome)
            else:
                targets.extend(t for t in outcome if t.kind not in ("class", "module"))
                classes.extend(t for t in outcome if t.kind == "class")
                modules.extend(t for t in outcome if t.kind == "module")
        found = (tuple(targets), tuple(skipped), source_roots, files)
        return cls(*found, tuple(classes), tuple(modules))


@runtime_checkable
class Language(Protocol):
    """A language adapter. Implementations hold no state beyond lazily built parsers: one is
    built per use (`get_language` returns a fresh one) and several run in threads at once."""

    name: str

    def discover(self, root: Path) -> Extraction:
        """Every target in the checked-out source tree at `root` (gen's prepare stage, once per
        repository).

        Returns the targets in a stable order (the same tree gives the same tuple), each with
        byte-exact `def_span` and `body_span`; a file that cannot be read or parsed is a
        `SkippedFile` with a short reason, never an exception. Raises `ReplicateError` only
        when `root` itself is unusable (not a directory). Reads files under `root` only, follows
        no symlink out of it, and executes nothing (tests, build scripts, the code itself)."""
        ...

    def stub(self, source: bytes, target: Target) -> bytes:
        """`source` with only the target's body replaced by a stub that raises when called.

        Called at gen (the task's stubbed file, the workspace an agent sees) and when grading
        (the file a candidate is spliced into; `recall`). Every byte outside `body_span` kept;
        the signature and docstring stay. Raises `ValueError` when the span lies outside
        `source` (a batch that does not match its original file)."""
        ...

    def stub_bodies(self, source: bytes, target: Target, others: tuple[Target, ...]) -> bytes:
        """`source` with the target's body and those of `others` (other targets of the same
        file) stubbed, their signatures and docstrings kept: a prompt that shows the file without
        other tasks' hidden bodies (`replicate export --context signatures`). Called by
        `replicate export` only; its output is shown to a model, never run."""
        ...

    def outline(self, source: bytes, target: Target) -> bytes:
        """The part of `source` (the target's original file) around the target, the target
        stubbed: the module's statements that are not definitions and the top-level definition
        that holds the target; the rest left out, each run marked with the lines it spans in
        `source` (`replicate export --context class`). Called by `replicate export` only;
        shown to a model, never run."""
        ...

    def splice(
        self, stubbed: bytes, candidate_text: str, target: Target, *, check: bool = True
    ) -> bytes:
        """The target file after putting a candidate into the stubbed file (docs/design.md §1).

        Called when grading (every candidate an agent, a model or a trainer hands in), by the
        repository-tests check, and at gen for mutants and degenerate programs. `candidate_text`
        is untrusted: a whole file as the workspace leaves it, or a bare definition of the
        target, possibly with other code around it; the adapter finds the target's definition in
        it and puts only that in place of the stub, the rest of the stubbed file kept byte for
        byte. Raises `SpliceError` (one line) when no definition of the target is found or it
        cannot be placed. Without `check`, a file that does not compile is not refused here (a
        `SpliceError`) but by the jail, where its import fails: gen's mutants, whose whole-file
        compile was most of their splicing's cost on a large module. Never evaluates the
        candidate."""
        ...

    def literals(self, root: Path) -> frozenset[str]:
        """The short string literals the library's own source at `root` spells (its tests left
        out): keys and names that are the library's protocol, never a user's data (gen does not
        rename them, `replicate.inputs.renaming`). Called once per repository at gen; reads
        files under `root` only; an empty set is always a correct (if weaker) answer."""
        ...

    def replace_definition(self, source: bytes, definition: str, target: Target) -> bytes | None:
        """`source` (the original file) with the target's definition replaced by `definition`
        (gen's mutants) and padded to the original's line count, as `splice` into the stubbed
        file would place it, but cheaply; None where the adapter cannot tell (gen splices).
        Called at gen for each mutant; must return exactly what `splice(stub(source), definition)`
        would, or None: returning None is always correct."""
        ...

    def body_tokens(
        self, source: bytes, target: Target, stubbed: bytes | None = None
    ) -> tuple[Token, ...] | None:
        """The kinded tokens of the target's body (docstring, comments and layout left out) in
        `source`: the original file, or with `stubbed` a candidate spliced into that stubbed
        file; None where `source` holds no such definition.  The core compares them
        (`replicate.core.copying.recall`, the verdict's `copy`). Called when grading; a
        candidate that holds no definition of the target is None, not an exception."""
        ...
