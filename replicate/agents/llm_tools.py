"""The tools of the built-in agent (`builtin:openai`), acting on one task's workspace.

The model runs on the host; what it asks for happens here.  The file tools (list, read, write,
edit) go through `replicate.confined`: a path is walked from the workspace without following a
symlink, so no path the model names and no link it planted leads out of the workspace.  The
run tools (Python, the repository's tests) start a command in the agent's sandbox exactly as the
shell agent's command runs (`agents/protocol.py:agent_request`): the workspace, the scrubbed
environment, `AGENT_LIMITS`, and no network — nothing the model wrote runs unsandboxed on the host.

A tool never raises: a bad call is answered with an error text the model can act on.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate import confined
from replicate.agents.llm_node import NodeRequests, runs_node
from replicate.agents.protocol import AgentConfig, agent_request
from replicate.batch import LoadedTask
from replicate.core import MAX_CANDIDATE_BYTES
from replicate.jail import RepoContext, SandboxRequest, node_tests

MAX_READ_BYTES = 200_000
MAX_LISTED = 400
MAX_OUTPUT_CHARS = 8_000
MIN_FILE_OUTPUT_CHARS = 600  # each test file's output tails, when a run has many
SKIPPED_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", "node_modules"})
# A task's language as the built-in agents' messages name it
LANGUAGE_NAMES = {"python": "Python", "javascript": "JavaScript", "typescript": "TypeScript"}


def _tool(name: str, description: str, **params: str) -> dict[str, Any]:
    properties = {key: {"type": "string", "description": text} for key, text in params.items()}
    schema = {"type": "object", "properties": properties, "required": sorted(params)}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


FILE_TOOLS: tuple[dict[str, Any], ...] = (
    _tool("list_files", "List the files under a folder of the workspace.", path="folder ('.')"),
    _tool("read_file", "Read a text file of the workspace.", path="workspace-relative path"),
    _tool(
        "write_file",
        "Create or replace a file of the workspace.",
        path="workspace-relative path",
        content="the whole new text",
    ),
    _tool(
        "edit_file",
        "Replace one occurrence of a string in a file (it must occur exactly once).",
        path="workspace-relative path",
        old="the exact text to replace",
        new="its replacement",
    ),
)
TOOLS: tuple[dict[str, Any], ...] = (  # a Python task's
    *FILE_TOOLS,
    _tool("run_python", "Run Python code in the workspace (no network).", code="the program"),
    _tool(
        "run_tests",
        "Run the repository's tests with pytest in the workspace (no network).",
        args="pytest arguments, e.g. a test file or -k EXPR ('' for all)",
    ),
)


def node_tools(name: str) -> tuple[dict[str, Any], ...]:
    """A JavaScript or TypeScript task's tools, `name` the language's."""
    loader = " (TypeScript files through a transpile-only loader)" if name == "TypeScript" else ""
    return (
        *FILE_TOOLS,
        _tool(
            "run_node",
            f"Run {name} with Node in the workspace (no network; the repository's npm "
            f"dependencies installed){loader}: `code`, a CommonJS JavaScript snippet (`node -e`; "
            "`require` the workspace's files by relative path), or else `file`, a workspace "
            "file (`node FILE`).",
            code="the snippet ('' to run `file`)",
            file="a workspace-relative path ('' when `code` is given)",
        ),
        _tool(
            "run_tests",
            f"Run the repository's {name} test files with Node in the workspace (no network), "
            "each in its own process as the repository's test runner runs it; says which "
            "passed (exit code 0) and shows each one's output.",
            files="test files, workspace-relative, separated by spaces ('' for all)",
        ),
    )


def tools_for(task: LoadedTask) -> tuple[dict[str, Any], ...]:
    """The tools offered on `task`: the file tools, and its language's run tools."""
    return node_tools(language_name(task)) if runs_node(task) else TOOLS


def language_name(task: LoadedTask) -> str:
    """The task's language as its messages name it ("Python", "TypeScript", ...)."""
    return LANGUAGE_NAMES.get(task.spec.language, task.spec.language)


@dataclass(frozen=True)
class Toolbox:
    """The tools bound to one workspace and its sandbox."""

    task: LoadedTask
    workspace: Path
    ctx: RepoContext
    config: AgentConfig

    def call(self, name: str, arguments: str, timeout_s: float) -> str:
        """Run one tool call; the text that goes back to the model."""
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            return "error: the arguments are not JSON"
        if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            return "error: the arguments must be an object of strings"
        handlers: Mapping[str, Callable[..., str]] = {
            "list_files": self.list_files,
            "read_file": self.read_file,
            "write_file": self.write_file,
            "edit_file": self.edit_file,
            **self._runs(timeout_s),
        }
        handler = handlers.get(name)
        if handler is None:
            return f"error: no tool named {name!r}"
        try:
            return handler(**args)
        except (TypeError, ValueError) as exc:
            return f"error: bad arguments for {name}: {exc}"
        except (OSError, confined.ConfinementError) as exc:
            return f"error: {exc}"

    def _runs(self, timeout_s: float) -> dict[str, Callable[..., str]]:
        """The run tools of the task's language."""
        if not runs_node(self.task):
            return {
                "run_python": lambda code: self.run((str(self.ctx.python), "-c", code), timeout_s),
                "run_tests": lambda args: self.run(self._pytest(args), timeout_s),
            }
        requests = NodeRequests(self.task, self.workspace, self.ctx, self.config)
        return {
            "run_node": lambda code, file: (
                self.shown(requests.snippet(code, file, timeout_s))
                if code or file
                else "error: give `code` or `file`"
            ),
            "run_tests": lambda files: self.run_node_tests(requests, files, timeout_s),
        }

    def list_files(self, path: str = ".") -> str:
        found: list[str] = []
        fd = self._open_dir(path)
        try:
            for here, dirs, files, _ in os.fwalk(".", dir_fd=fd):
                dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
                found += sorted(os.path.normpath(os.path.join(here, f)) for f in files)
                if len(found) > MAX_LISTED:
                    break
        finally:
            os.close(fd)
        more = f"\n... (more than {MAX_LISTED} files)" if len(found) > MAX_LISTED else ""
        return "\n".join(found[:MAX_LISTED]) + more if found else "(no files)"

    def read_file(self, path: str) -> str:
        data = confined.read_bytes(self.workspace, path, MAX_READ_BYTES)
        text = data[:MAX_READ_BYTES].decode("utf-8", "replace")
        return text + ("\n... (truncated)" if len(data) > MAX_READ_BYTES else "")

    def write_file(self, path: str, content: str) -> str:
        data = content.encode("utf-8")
        if len(data) > MAX_CANDIDATE_BYTES:
            return f"error: larger than {MAX_CANDIDATE_BYTES} bytes"
        confined.write_bytes(self.workspace, path, data)
        return f"wrote {len(data)} bytes to {path}"

    def edit_file(self, path: str, old: str, new: str) -> str:
        text = confined.read_bytes(self.workspace, path).decode("utf-8", "replace")
        count = text.count(old) if old else 0
        if count != 1:
            return f"error: `old` occurs {count} times in {path}; it must occur exactly once"
        return self.write_file(path, text.replace(old, new, 1))

    def run(self, argv: tuple[str, ...], timeout_s: float) -> str:
        request = agent_request(
            self.task, self.workspace, self.ctx, self.config, argv, timeout_s=timeout_s
        )
        return self.shown(request)

    def shown(self, request: SandboxRequest, limit: int = MAX_OUTPUT_CHARS) -> str:
        """`request` run in the sandbox: how it ended, and the tails of its output."""
        result = self.config.sandbox.run(request)
        status = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        out = result.stdout.decode("utf-8", "replace")[-limit:]
        err = result.stderr.decode("utf-8", "replace")[-limit:]
        return f"{status}\n--- stdout\n{out}\n--- stderr\n{err}"

    def run_node_tests(self, requests: NodeRequests, files: str, timeout_s: float) -> str:
        """The named test files (all the repository's when none), each in its own process
        within `timeout_s` in all: how many passed, then each one's end and output."""
        chosen = tuple(shlex.split(files)) or node_tests.find_test_files(self.workspace)
        if not chosen:
            return "error: no test files found"
        deadline = time.monotonic() + timeout_s
        limit = max(MAX_OUTPUT_CHARS // len(chosen), MIN_FILE_OUTPUT_CHARS)
        shown, passed = [], 0
        for name in chosen:
            left = deadline - time.monotonic()
            ran = self.shown(requests.test_file(name, chosen, left), limit) if left > 0 else ""
            passed += ran.startswith("exit code 0\n")
            shown.append(f"=== {name}: " + (ran or "not run: the time limit is spent"))
        return f"{passed} of {len(chosen)} test files passed\n" + "\n".join(shown)

    def _pytest(self, args: str) -> tuple[str, ...]:
        python = str(self.ctx.python)
        return (python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *shlex.split(args))

    def _open_dir(self, path: str) -> int:
        clean = path.strip().strip("/")
        if clean in ("", "."):
            return os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        with confined.parent_dir(self.workspace, clean) as (parent, leaf):
            return os.open(leaf, flags, dir_fd=parent)
