"""The built-in agent's run tools on a JavaScript/TypeScript task, as sandbox requests: Node
run on a snippet or a file (`run_node`), and one of the repository's test files run the way gen
runs it (`run_tests`: `jail.node_tests`, mocha's files through mocha's entry).

Each request is the jail's Node request (`jail.node`: the repository's installed npm
dependencies shown read-only on `NODE_PATH` and at `/node_modules`, as gen and grading show
them; TypeScript through the transpile-only loader, `jail.typescript`) made the agent's: the
workspace (writable) as the tree and the working folder, the agent's scrubbed environment,
mounts and limits, and no network (`agents/protocol.py:agent_request`), as `run_python` is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

from replicate.agents.protocol import AgentConfig, agent_request
from replicate.batch import LoadedTask
from replicate.jail import (
    Mount,
    RepoContext,
    SandboxRequest,
    node,
    node_deps,
    node_tests,
    typescript,
)
from replicate.languages import javascript_detect

SCRIPT_LANGUAGES = frozenset({"javascript", "typescript"})


def runs_node(task: LoadedTask) -> bool:
    """Whether the task's tools are Node's (a JavaScript or TypeScript task)."""
    return task.spec.language in SCRIPT_LANGUAGES


@dataclasses.dataclass(frozen=True)
class NodeRequests:
    """The Node requests of one attempt: its task, workspace, repository context and config."""

    task: LoadedTask
    workspace: Path
    ctx: RepoContext
    config: AgentConfig

    def snippet(self, code: str, file: str, timeout_s: float) -> SandboxRequest:
        """`node -e CODE` (CommonJS), or `node FILE` (a workspace path) when `code` is empty."""
        script = ("-e", code) if code else ("--", file)
        request = node.node_request(
            self.workspace,
            b"",
            node.NodeSettings(timeout_s=timeout_s),
            self._shown(),
            script=script,
            isolated=self.config.sandbox.isolated,
        )
        return self._agents(request, [file] if file and not code else [], timeout_s)

    def test_file(self, test_file: str, files: Sequence[str], timeout_s: float) -> SandboxRequest:
        """`test_file` run as gen runs the repository's test files (`files`: those of this call,
        for mocha's `node:test` files run as themselves)."""
        runner = javascript_detect.read_runner(self.task.repo.tree / "package.json").value
        command = node_tests.runner_command(self.workspace, runner, files)
        request = node_tests.request_for_test_file(
            self.workspace,
            test_file,
            command,
            node.NodeSettings(timeout_s=timeout_s),
            mounts=self._shown(),
            isolated=self.config.sandbox.isolated,
        )
        return self._agents(request, [test_file], timeout_s)

    def _shown(self) -> list[Mount]:
        node_deps.ensure_installed(self.task.repo.tree)  # the workspace's package.json's key
        return [Mount.same(str(self.workspace), writable=True)]

    def _agents(
        self, request: SandboxRequest, paths: Sequence[str], timeout_s: float
    ) -> SandboxRequest:
        """`request` (the jail's) in the agent's sandbox: its environment over the jail's Node
        variables (`NODE_PATH`), its mounts and the jail's, its limits; no channel, no stdin;
        the TypeScript loader where the target or a path run is TypeScript."""
        agents = agent_request(
            self.task, self.workspace, self.ctx, self.config, request.argv, timeout_s=timeout_s
        )
        extra = tuple(m for m in request.mounts if m not in agents.mounts)
        merged = dataclasses.replace(
            agents, env={**request.env, **agents.env}, mounts=(*agents.mounts, *extra)
        )
        return typescript.for_files(merged, [self.task.hidden.target.path, *paths])
