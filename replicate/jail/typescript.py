"""TypeScript in the Node jail: a transpile-only loader, preloaded only when a job touches a
TypeScript file (.ts, .tsx, .mts, .cts), for CommonJS and ES modules alike.

The loader is sucrase (pinned in `node_tools.SUCRASE`), chosen because it is pure JavaScript (no
native binary, no install script: esbuild's is a platform binary its install script picks, and
its API spawns that binary as a service), synchronous and in-process (a `require` hook needs a
synchronous transform), fast, and keeps every line where it was (a traceback's line is the
source's, as spliced candidates and mutants need). It strips types and nothing more: no type
checking and no `const enum` across files, as any transpile-only loader (esbuild's,
`ts.transpileModule`). Sucrase's own gaps: decorators are left as written (Node 20 then refuses
the file: the target fails to load, loudly) and a `namespace` holding values is dropped (only
TypeScript's compiler keeps it, at several times the load time). `runner_js/typescript.cjs` is
the loader (`--require`d before the runner or the recorder), `runner_js/typescript.mjs` its ES
module hook; sucrase's folder is mounted read-only and named to them in `REPLICATE_SUCRASE`,
which they remove before the repository's code runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from replicate.jail.node_tools import SUCRASE, tool_modules
from replicate.sandbox import Mount, SandboxRequest

TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
LOADER = Path(__file__).resolve().parent / "runner_js" / "typescript.cjs"
ENV_NAME = "REPLICATE_SUCRASE"


def is_typescript(path: str) -> bool:
    """Whether `path` names a TypeScript file (a declaration file `.d.ts` is one too)."""
    return path.endswith(TS_SUFFIXES)


@dataclass(frozen=True)
class TypeScriptLoader:
    """The installed loader: `modules`, the `node_modules` folder that holds sucrase."""

    modules: Path

    @property
    def sucrase(self) -> Path:
        return self.modules / SUCRASE.package

    def applied(self, request: SandboxRequest) -> SandboxRequest:
        """`request` (a `node` command: the binary, node's options, then the script) with the
        loader preloaded, its folder mounted and named."""
        binary, *rest = request.argv
        return replace(
            request,
            argv=(binary, "--require", str(LOADER), *rest),
            env={**request.env, ENV_NAME: str(self.sucrase)},
            mounts=(*request.mounts, Mount.same(str(self.modules))),
        )


def typescript_loader() -> TypeScriptLoader:
    """The loader, sucrase installed into the cache on first use (`node_tools`)."""
    return TypeScriptLoader(tool_modules(SUCRASE).resolve())


def for_files(request: SandboxRequest, paths: Iterable[str]) -> SandboxRequest:
    """`request` with the TypeScript loader where any of `paths` is TypeScript, else as it is."""
    if any(is_typescript(p) for p in paths):
        return typescript_loader().applied(request)
    return request
