"""Node in a Harbor export's images, for its JavaScript/TypeScript tasks only.

What the grader needs in the verifier's container (`grading.javascript` → `jail.node`), all
copied from this machine into the build contexts, since every build is offline:

- `node`: the host's binary (`jail.node.node_binary()`), in the shared verifier base at
  `NODE_IN_IMAGE`, and at /usr/bin/node the jail wrapper (the interpreter's, `JAIL_PYTHON`):
  a candidate runs as `nobody`, out of reach of the root-only batch.  Only a self-contained
  binary is taken: one that links nothing beyond glibc, libstdc++ and libgcc (`SYSTEM_LIBS`,
  which every Debian base image holds, since apt needs them), as the official builds of
  nodejs.org are.  A binary that links more (Debian's `nodejs`: libnode, libuv, ICU, OpenSSL,
  ...) is refused in one line rather than copied with its libraries: their sonames must match
  the image's Debian release one by one, and a mismatch would fail only at grading time, as a
  load error scored like a wrong answer;
- the pinned npm tools (`node_tools`: sucrase, fast-check), in the base image's cache;
- per task, the repository's installed npm dependencies (`node_deps`), in the task verifier's
  cache under the same key: it is the content of package.json and its lockfile, which the
  one-task batch copies byte for byte.

The agent's image gets the same `node` (copied from the verifier base, so the binary is in the
export once) and the same installed dependencies at /app/node_modules, the copies of the
package itself among them already stand-ins that load /app: an agent asked to write JavaScript
can run it and the repository's tests.  For a TypeScript task it also gets the jail's
transpile-only loader (`jail.typescript`: sucrase), preloaded in every `node` by `NODE_OPTIONS`,
so `node test/x.test.ts` runs as gen ran it (the loader drops the variable naming sucrase before
the repository's code runs, so a node that code spawns has no TypeScript).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from replicate.errors import ReplicateError
from replicate.exporters.harbor_files import CACHE_IN_IMAGE, JAIL_PYTHON, VERIFIER_IMAGE, WORKDIR
from replicate.jail import node, node_deps, node_tools
from replicate.jail import typescript as ts_loader

NODE_IN_IMAGE = "/opt/replicate/node/bin/node"
NODE_ON_PATH = "/usr/bin/node"  # the base image has none: free for the wrapper
# the verifier base of an export with script tasks: its own tag, which an export without Node
# (building `VERIFIER_IMAGE`) never replaces under the images built on it
VERIFIER_NODE_IMAGE = f"{VERIFIER_IMAGE}-node"
LOADER_IN_IMAGE = "/opt/replicate/node/typescript"  # the jail's TypeScript loader's two files
SUCRASE_IN_AGENT = "/opt/replicate/node/sucrase"
SYSTEM_LIBS = frozenset(
    {"libc", "libm", "libdl", "libpthread", "librt", "libstdc++", "libgcc_s", "ld-linux-x86-64"}
    | {"ld-linux-aarch64", "linux-vdso", "linux-gate"}
)
TOOLS = (node_tools.SUCRASE, node_tools.FAST_CHECK)
LDD_TIMEOUT_S = 60


def linked_libraries(binary: Path) -> list[str]:
    """The names (before `.so`) of what `ldd` lists for `binary`; [] for a static one."""
    try:
        done = subprocess.run(
            ["ldd", str(binary)], capture_output=True, text=True, timeout=LDD_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ReplicateError(f"cannot list the libraries {binary} links: {exc}") from None
    if done.returncode != 0:  # "not a dynamic executable"
        return []
    names = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    return [Path(name).name.split(".so")[0] for name in names]


def foreign_libraries(binary: Path) -> list[str]:
    """What `binary` links beyond `SYSTEM_LIBS`, sorted ([]: self-contained)."""
    return sorted(set(linked_libraries(binary)) - SYSTEM_LIBS)


def self_contained_node() -> Path:
    """The host's node, when it links nothing a Debian base image lacks; else a one-line error."""
    binary = node.node_binary()
    extra = foreign_libraries(binary)
    if extra:
        raise ReplicateError(
            f"{binary} links {', '.join(extra)}: Harbor's images take a self-contained node "
            "only (linking glibc and libstdc++ alone, as nodejs.org's builds); put one first "
            "on PATH to export JavaScript/TypeScript tasks"
        )
    return binary


def jail_node() -> str:
    """The wrapper at /usr/bin/node: the jail interpreter's, around the real binary."""
    return JAIL_PYTHON.replace("interpreter", "Node").replace("@PYTHON@", NODE_IN_IMAGE)


def write_base(base: Path) -> None:
    """Into the verifier base's build context: node/ (the binary, its wrapper) and
    node-tools/ (each pinned tool as the cache holds it, installed there first if need be)."""
    (base / "node").mkdir()
    shutil.copy2(self_contained_node(), base / "node" / "node")
    (base / "node" / "jail-node.sh").write_text(jail_node(), encoding="utf-8")
    (base / "node" / "typescript").mkdir()
    for loader in (ts_loader.LOADER, ts_loader.LOADER.with_suffix(".mjs")):
        shutil.copy2(loader, base / "node" / "typescript" / loader.name)
    for tool in TOOLS:
        folder = node_tools.tool_modules(tool).parent
        shutil.copytree(folder, base / "node-tools" / folder.name, symlinks=True)


def base_lines() -> list[str]:
    """The verifier base Dockerfile's lines that install Node and the tools."""
    return [
        f"COPY node/node {NODE_IN_IMAGE}",
        f"COPY node/jail-node.sh {NODE_ON_PATH}",
        f"COPY node/typescript/ {LOADER_IN_IMAGE}/",
        f"COPY node-tools/ {CACHE_IN_IMAGE}/node-tools/",
        f"RUN chmod 755 {NODE_IN_IMAGE} {NODE_ON_PATH} && {NODE_IN_IMAGE} --version",
    ]


def installed_deps(tree: Path) -> Path | str | None:
    """The cache folder of the tree's installed dependencies (installed on the host first if
    the cache lacks them: gen did); None when it declares none, else why not (one line)."""
    if not node_deps.declares(tree):
        return None
    found = node_deps.install(tree)
    return found if found is None or isinstance(found, str) else found.modules.parent


def copy_deps(folder: Path, tests: Path, environment: Path) -> None:
    """`folder` (`installed_deps`) into the verifier's context under its key, and its
    node_modules into the agent's context."""
    shutil.copytree(folder, tests / "node-deps" / folder.name, symlinks=True)
    shutil.copytree(folder / "node_modules", environment / "node_modules", symlinks=True)


def verifier_lines(has_deps: bool) -> list[str]:
    """A script task verifier's extra line: its dependencies into the image's cache."""
    return [f"COPY node-deps/ {CACHE_IN_IMAGE}/node-deps/"] if has_deps else []


def agent_lines(has_deps: bool, typescript: bool) -> list[str]:
    """A script task agent image's lines: node from the verifier base; for TypeScript, the
    jail's transpile-only loader and sucrase, preloaded in every node (`NODE_OPTIONS`); the
    installed dependencies at /app/node_modules, their stand-ins for the package loading /app."""
    lines = [f"COPY --from={VERIFIER_NODE_IMAGE} {NODE_IN_IMAGE} {NODE_ON_PATH}"]
    if typescript:
        sucrase = f"{CACHE_IN_IMAGE}/node-tools/{node_tools.SUCRASE.spec}/"
        lines += [
            f"COPY --from={VERIFIER_NODE_IMAGE} {LOADER_IN_IMAGE}/ {LOADER_IN_IMAGE}/",
            f"COPY --from={VERIFIER_NODE_IMAGE} {sucrase} {SUCRASE_IN_AGENT}/",
            f"ENV NODE_OPTIONS=--require={LOADER_IN_IMAGE}/{ts_loader.LOADER.name} "
            f"{ts_loader.ENV_NAME}={SUCRASE_IN_AGENT}/node_modules/{node_tools.SUCRASE.package}",
        ]
    if has_deps:
        lines += [
            f"COPY node_modules/ {WORKDIR}/node_modules/",
            f"ENV {node_deps.OWN_ROOT_ENV}={WORKDIR}",
        ]
    return lines


def deps_warnings(failed: Iterable[tuple[str, str]]) -> list[str]:
    """One line per repository whose dependencies could not be installed: (repository, why)."""
    return [
        f"{repo}: its npm dependencies are not in the images ({why}); its tasks are graded "
        "without them, as gen ran them"
        for repo, why in failed
    ]
