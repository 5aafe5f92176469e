"""The TypeScript loader put on a Node command: preloaded before the script, sucrase's folder
mounted and named; only where a file is TypeScript."""

from __future__ import annotations

from pathlib import Path

from replicate.jail.node import NodeSettings, node_request
from replicate.jail.typescript import ENV_NAME, LOADER, TypeScriptLoader, for_files, is_typescript
from replicate.sandbox import Mount


def test_the_loader_comes_before_the_script_with_its_folder() -> None:
    request = node_request(Path("/repo"), b"{}", NodeSettings(), node=Path("/usr/bin/node"))
    loader = TypeScriptLoader(Path("/cache/node-tools/sucrase/node_modules"))
    applied = loader.applied(request)
    assert applied.argv[:3] == ("/usr/bin/node", "--require", str(LOADER))
    assert applied.argv[3:] == request.argv[1:]
    assert applied.env[ENV_NAME] == "/cache/node-tools/sucrase/node_modules/sucrase"
    assert applied.mounts == (*request.mounts, Mount.same(str(loader.modules)))
    assert ENV_NAME not in request.env  # the request itself is unchanged


def test_typescript_files_only() -> None:
    assert [is_typescript(p) for p in ("a.ts", "b.mts", "c.cts", "d.tsx", "e.d.ts")] == [True] * 5
    assert not any(is_typescript(p) for p in ("a.js", "b.mjs", "c.cjs", "d.jsx", "ts"))
    request = node_request(Path("/repo"), b"{}", NodeSettings(), node=Path("/usr/bin/node"))
    assert for_files(request, ["a.js", "test/b.mjs"]) is request
