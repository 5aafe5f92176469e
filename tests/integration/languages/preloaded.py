"""The checks a runner whose test files run with its API preloaded (jest, vitest, ava:
`jail.node_tests.PRELOADS`) goes through: gen mints from such a suite and says how it ran it, and
the same file records calls with the preload and none without it (the positive control)."""

from __future__ import annotations

from pathlib import Path

from replicate.gen import javascript
from replicate.jail import get_sandbox, node_deps, node_harvest, node_tests
from replicate.jail.node import NodeTarget
from tests.integration.languages.test_npm_harvest import (
    assert_minted_or_degenerate,
    mint_for_notes,
)


def assert_mints(tree: Path, out: Path, runner: str, installed: str, symbol: str) -> None:
    """`gen` on `tree` installs `installed`, runs its tests with `runner`'s API preloaded (the
    note), none failing, and mints `symbol` (or drops it on its degenerate baseline only)."""
    notes = mint_for_notes(tree, out)
    assert installed in notes and javascript.PRELOAD_NOTES[runner] in notes
    assert "not supported yet" not in notes and "failed under node" not in notes
    assert_minted_or_degenerate(out, symbol)


def assert_records_only_with_it(
    tree: Path, runner: str, target: NodeTarget, test_file: str, calls: int
) -> None:
    """`test_file` of `tree`, its dependencies installed as gen installs them: with `runner`'s
    preload, it passes and records at least `calls` calls to `target`; without, it fails and
    records none."""
    node_deps.install(tree)  # once a machine: the key is the package.json's content
    command = node_tests.runner_command(tree, runner, [test_file])
    assert command.script == ("--require", str(node_tests.PRELOADS[runner][1]))
    local = get_sandbox("local")
    given = node_harvest.record_tests(local, tree, [target], [test_file], command=command)
    assert given.files[0].exit_code == 0 and len(given.calls) >= calls, given.files
    bare = node_harvest.record_tests(local, tree, [target], [test_file])
    assert bare.files[0].exit_code != 0 and not bare.calls
