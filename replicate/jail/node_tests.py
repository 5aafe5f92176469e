"""A JavaScript/TypeScript repository's own test files: which they are, and how one of them runs
in the jail. Gen's harvest runs each under the recorder (`node_harvest`); the built-in agent's
`run_tests` tool runs them as they are (`agents/llm_node.py`) through the same request.

Each file runs in its own Node process as a plain script (`node <file>`): a `node:test`, tape,
node-tap or uvu file, or one that asserts at its top level; a mocha file through mocha's own
entry (in the file's process) when the repository's installed dependencies (`node_deps`) hold
it; a jest, vitest or ava file as a script with that runner's API preloaded (`PRELOADS`, the
shims in `runner_js/`: jest and vitest run a file where no `--require` reaches, ava refuses to
load outside its own workers). Another runner's files (karma, ...) run as plain scripts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from replicate.jail import node_deps
from replicate.jail.node import RUNNER_DIR, NodeSettings, node_request
from replicate.sandbox import Mount, SandboxRequest

# runners whose test files run as plain Node scripts: tape's tests run as the process ends;
# node-tap's runner itself spawns `node FILE` for each test file, which then reports as TAP;
# an uvu file ends with its suites' `.run()`, which `node FILE` runs as uvu's own CLI would
PLAIN_RUNNERS = frozenset({"node:test", "tape", "tap", "uvu", "unknown"})
# mocha 8 and later; before it, `bin/mocha` spawned `_mocha`, which runs the file in its process
MOCHA_ENTRIES = ("mocha/bin/mocha.js", "mocha/bin/_mocha")
# jest's globals on node:test, with jest's own expect and jest-mock (a jest file runs as a script)
JEST_GLOBALS = RUNNER_DIR / "jest_globals.cjs"
# `import ... from 'vitest'` resolved to vitest's API on node:test (a vitest file runs as a script)
VITEST_GLOBALS = RUNNER_DIR / "vitest_globals.cjs"
# `require('ava')` and `import test from 'ava'` given ava's API on node:test (likewise)
AVA_GLOBALS = RUNNER_DIR / "ava_globals.cjs"
# a runner whose files run as scripts with its API preloaded: the installed package that API is
# made with, and the preload
PRELOADS = {
    "jest": ("expect", JEST_GLOBALS),
    "vitest": ("@vitest/expect", VITEST_GLOBALS),
    "ava": ("ava", AVA_GLOBALS),
}
TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec"})
TEST_SUFFIXES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")  # TypeScript through the loader
DECLARATIONS = (".d.ts", ".d.cts", ".d.mts")  # TypeScript's type declarations: nothing runs
MAX_TEST_FILES = 200


def find_test_files(tree: Path) -> tuple[str, ...]:
    """The repository's test files, JavaScript or TypeScript (under a test folder, or named
    `*.test.*`/`*.spec.*`), by path, node_modules and declaration files left out; at most
    `MAX_TEST_FILES`."""
    found = []
    for path in sorted(tree.rglob("*")):
        rel = path.relative_to(tree)
        if "node_modules" in rel.parts or not path.is_file() or path.is_symlink():
            continue
        if not path.name.endswith(TEST_SUFFIXES) or path.name.endswith(DECLARATIONS):
            continue
        named = any(f".{word}." in path.name for word in ("test", "spec"))
        if named or TEST_DIRS & set(rel.parts[:-1]):
            found.append(rel.as_posix())
    return tuple(found[:MAX_TEST_FILES])


@dataclass(frozen=True)
class RunnerCommand:
    """How one test file runs, in one Node process: `script`, node's arguments before the file
    (a test runner's entry that runs the file in its own process, as mocha's `bin/mocha.js`
    does; none: the file itself, a `node:test` file or a plain script), and `modules`, a
    folder of installed development dependencies (mounted read-only, on `NODE_PATH`); the
    test files in `plain` run as themselves, without `script` (a `node:test` file beside a
    mocha suite)."""

    script: tuple[str, ...] = ()
    modules: Path | None = None
    plain: frozenset[str] = frozenset()


def runner_command(tree: Path, runner: str, files: Sequence[str] = ()) -> RunnerCommand:
    """How each test file runs: mocha's files through its own entry (`MOCHA_ENTRIES`, in the
    test file's process) when the repository's installed dependencies hold it; jest's, vitest's
    and ava's as plain scripts with their API preloaded (`PRELOADS`) when they hold the package
    it is made with; those of `files` that name `node:test` as themselves; every other file as a
    plain Node script (a tape file runs its tests as the process ends)."""
    deps = node_deps.installed(tree)
    if deps is None:
        return RunnerCommand()
    preload = PRELOADS.get(runner)
    if preload is not None and (deps.modules / preload[0]).is_dir():
        script: tuple[str, ...] = ("--require", str(preload[1]))
    elif runner == "mocha":
        entry = next((e for e in MOCHA_ENTRIES if (deps.modules / e).is_file()), None)
        if entry is None:
            return RunnerCommand()
        script = (str(deps.modules / entry),)
    else:
        return RunnerCommand()
    plain = frozenset(f for f in files if b"node:test" in (tree / f).read_bytes())
    return RunnerCommand(script=script, plain=plain)


def request_for_test_file(
    tree: Path,
    test_file: str,
    command: RunnerCommand,
    settings: NodeSettings,
    *,
    mounts: Sequence[Mount] = (),
    preload: tuple[str, ...] = (),
    isolated: bool = True,
) -> SandboxRequest:
    """`test_file` (relative to `tree`, the working folder) run by `command` in one Node process
    (`node.node_request`: the tree's installed dependencies shown; `mounts` show the tree, by
    default `tree` alone read-only), node's `preload` arguments (a `--require`) first. The
    TypeScript loader is the caller's to add (`typescript.for_files`)."""
    runner = () if test_file in command.plain else command.script
    script = (*preload, *runner, test_file)
    shown = [*(mounts or (Mount.same(str(tree)),))]
    env = {}
    if command.modules is not None:
        shown.append(Mount.same(str(command.modules.resolve())))
        env["NODE_PATH"] = str(command.modules.resolve())
    request = node_request(tree, b"", settings, shown, script=script, isolated=isolated)
    if "NODE_PATH" in request.env and "NODE_PATH" in env:  # the repository's own, then these
        env["NODE_PATH"] = f"{request.env['NODE_PATH']}:{env['NODE_PATH']}"
    return replace(request, env={**request.env, **env})
