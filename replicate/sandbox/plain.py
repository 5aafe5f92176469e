"""The `plain` sandbox: no isolation at all — for tests and benchmarks only.

It runs the command directly with the request's exact environment and working directory, under
the same wall clock, resource limits, output caps, results channel and whole-tree kill as every
other backend, but sees the host's whole file system and network.  It cannot remap paths, so a
mount whose target differs from its source is refused; same-path mounts need nothing.
"""

from __future__ import annotations

from replicate.sandbox.base import SandboxRequest, SandboxResult
from replicate.sandbox.process import ProcessSpec, run_process


class PlainSandbox:
    """Runs each request as a plain child process of ours."""

    name = "plain"
    isolated = False

    def run(self, request: SandboxRequest) -> SandboxResult:
        for mount in request.mounts:
            if mount.source != mount.target:
                raise ValueError(
                    f"the plain sandbox cannot show {mount.source} at {mount.target}; "
                    "use a sandbox that isolates (local)"
                )
        return run_process(
            ProcessSpec(
                argv=request.argv,
                env=request.env,
                cwd=request.cwd,
                timeout_s=request.timeout_s,
                limits=request.limits,
                stdin=request.stdin,
                channel=request.channel,
            )
        )
