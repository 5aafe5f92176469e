"""A JavaScript repository's own npm dependencies (its package.json's `dependencies` and
`devDependencies`: the test runner, the libraries its code requires), installed on the host into
the cache and shown read-only to every Node run in the jail, gen's and grading's alike.

Nothing of the repository runs outside the jail: npm installs with `--ignore-scripts` (no
`preinstall`/`install`/`postinstall` of any package runs), `--no-audit --no-fund`,
`--prefer-offline` (the npm cache first). The folder is keyed by the content of the package.json
and its lockfile, so the same manifest installs once per machine. A relative `file:` dependency
is read against the tree and installed as a copy (`--install-links`), never a link into it.

A copy of the package itself among the installed ones (a development dependency that depends on
it, as browserify's `url` depends on `qs`, or mocha's `debug` on `ms`) is the original a
candidate could `require` instead of writing a body: each is replaced, before the folder is
published, by a stand-in whose `main` requires the repository's own tree (`OWN_ROOT_ENV`, set by
`node.node_request` to the tree the jail shows, the candidate's in a grading run), so what
depends on the package still loads it, and said so.

Node finds the folder twice over (`mounts`; `node.node_request` sets `NODE_PATH`): a bare
`require` from the tree resolves on `NODE_PATH` once no `node_modules` of the tree holds the
name; an ES module's `import` never reads `NODE_PATH`, but walks up from the importing file's
folder to the root, where the same folder is mounted as `/node_modules` (the last place both
look, after any `node_modules` of the tree itself).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from replicate.cache import cache_root, file_lock, staging_beside
from replicate.npm_command import npm_messages, run_npm
from replicate.sandbox import Mount

INSTALL_TIMEOUT_S = 900
LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json")
SECTIONS = ("dependencies", "devDependencies")
# part of the key: an install made with other flags is another folder
FLAGS = (
    "--ignore-scripts",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
    "--install-links",
    "--loglevel=error",
)
SCRIPTS = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx")
# a package named by `require('x')`, `import ... from 'x'`, `import('x')` (not a relative path)
IMPORTED = re.compile(r"""(?:require\(|import\(|from\s|import\s)\s*['"]([^'"./][^'"\s]*)['"]""")
SHOWN = "shown.json"  # what the folder holds, written beside it
OWN_ROOT_ENV = "REPLICATE_PACKAGE_ROOT"
STAND_IN = "replicateStandIn"  # the field that marks a stand-in's package.json
STAND_IN_CODE = (
    "'use strict';\n// replicate: the package itself, loaded from the repository's tree\n"
    f"module.exports = require(process.env.{OWN_ROOT_ENV});\n"
)


@dataclass(frozen=True)
class Installed:
    """An installed dependency folder: `modules` (a `node_modules`), the declared packages as
    installed in it (`name@version`), and the copies of the package itself removed from it."""

    modules: Path
    packages: tuple[str, ...]
    removed: tuple[str, ...] = ()  # replaced by stand-ins
    # development dependencies no script names, left out after the full install failed, and
    # (last) why it failed
    left_out: tuple[str, ...] = ()

    def note(self) -> str:
        note = (
            f"installed {len(self.packages)} npm dependencies with --ignore-scripts "
            f"(no lifecycle script ran): {', '.join(self.packages)}"
        )
        if self.left_out:
            *names, why = self.left_out
            note += f"; {len(names)} that no script names left out ({why}): {', '.join(names)}"
        if self.removed:
            note += (
                f"; {len(self.removed)} {'copy' if len(self.removed) == 1 else 'copies'} of "
                "the package itself among them replaced by its tree"
            )
        return note


ROOT_MODULES = "/node_modules"  # where an ES module's `import` finds them, from any folder


def mounts(deps: Installed, at_root: bool = True) -> tuple[Mount, ...]:
    """The installed folder shown read-only at its own path (on `NODE_PATH`) and, `at_root`, as
    the jail's `/node_modules` (for `import`)."""
    own = Mount.same(str(deps.modules))
    return (own, Mount(str(deps.modules), ROOT_MODULES)) if at_root else (own,)


def _manifest(tree: Path) -> dict[str, Any] | None:
    try:
        read = json.loads((tree / "package.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return read if isinstance(read, dict) else None


def declares(tree: Path) -> bool:
    """Whether the tree's package.json declares any dependency or development dependency."""
    manifest = _manifest(tree) or {}
    return any(isinstance(manifest.get(s), dict) and manifest[s] for s in SECTIONS)


def deps_key(tree: Path) -> str:
    """The cache key: the package.json's and its lockfile's bytes, and the install's flags."""
    digest = hashlib.sha256(" ".join(FLAGS).encode())
    for name in ("package.json", *LOCKFILES):
        path = tree / name
        digest.update(f"\0{name}\0".encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def _folder(tree: Path) -> Path:
    return cache_root() / "node-deps" / deps_key(tree)


def installed(tree: Path) -> Installed | None:
    """The tree's installed folder when the cache holds it (nothing is installed here)."""
    if not declares(tree):
        return None
    folder = _folder(tree)
    try:
        shown = json.loads((folder / SHOWN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    packages, removed = tuple(shown["packages"]), tuple(shown["removed"])
    return Installed(folder / "node_modules", packages, removed, tuple(shown.get("left_out", ())))


def install(tree: Path) -> Installed | str | None:
    """The tree's dependencies installed into the cache (once, under a lock, built beside and
    renamed into place); None when it declares none; a str, one line: why the install failed."""
    if not declares(tree):
        return None
    folder = _folder(tree)
    with file_lock(folder.with_name(folder.name + ".lock")):
        found = installed(tree)
        if found is not None:
            return found
        failed = _attempt(tree, folder, None)
        if failed is not None:
            dev = _section(_manifest(tree) or {}, "devDependencies")
            named = frozenset(dev) & named_packages(tree)
            if named == frozenset(dev) or _attempt(tree, folder, named, failed) is not None:
                return failed
    return installed(tree) or "the installed dependencies could not be read back"


@functools.lru_cache(maxsize=64)
def ensure_installed(tree: Path) -> None:
    """The tree's dependencies installed as gen installed them, where the cache lacks them (a
    batch graded on another machine, a built-in agent's run tools); tried once a process: a
    failing install is not run again for each candidate or tool call, and the runs go on
    without it, as gen's did."""
    if installed(tree) is None:
        install(tree)


def _attempt(tree: Path, folder: Path, only: frozenset[str] | None, why: str = "") -> str | None:
    """One install into `folder` (the development dependencies `only` those, when given, the
    full install having failed for `why`); None when it worked, else why not."""
    staging = staging_beside(folder)
    try:
        failed = _install(tree, staging, only, why)
        if failed is None:
            shutil.rmtree(folder, ignore_errors=True)
            staging.rename(folder)
        return failed
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _section(manifest: dict[str, Any], section: str) -> dict[str, Any]:
    found = manifest.get(section)
    return found if isinstance(found, dict) else {}


def named_packages(tree: Path) -> frozenset[str]:
    """The packages the tree's own scripts `require` or import by name, and those its `test`
    script runs (its runner): what its tests need of its development dependencies."""
    names: set[str] = set()
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in ("node_modules", ".git")]
        for name in files:
            if name.endswith(SCRIPTS) and (path := Path(folder, name)).stat().st_size < 2_000_000:
                text = path.read_text(encoding="utf-8", errors="replace")
                names.update(_package_of(m) for m in IMPORTED.findall(text))
    return frozenset(names | _test_words(_section(_manifest(tree) or {}, "scripts")))


def _test_words(scripts: dict[str, Any]) -> set[str]:
    """The words of the `test` script, and of the scripts it runs (`npm run NAME`), once each."""
    words: set[str] = set()
    todo, seen = ["test"], set()
    while todo:
        name = todo.pop()
        script = scripts.get(name)
        if name in seen or not isinstance(script, str):
            continue
        seen.add(name)
        split = script.replace("'", " ").replace('"', " ").replace("&&", " ").split()
        words.update(split)
        todo += [b for a, b in itertools.pairwise(split) if a == "run"]
    return words


def _package_of(specifier: str) -> str:
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]


def _staged_manifest(tree: Path) -> dict[str, Any]:
    """The package.json npm installs from: its relative `file:` specs made absolute (read
    against the tree), its scripts left out (npm runs none anyway)."""
    manifest = dict(_manifest(tree) or {})
    manifest.pop("scripts", None)
    for section in SECTIONS:
        deps = manifest.get(section)
        if not isinstance(deps, dict):
            continue
        manifest[section] = {
            name: f"file:{(tree / spec[5:]).resolve()}"
            if isinstance(spec, str) and spec.startswith("file:") and not spec[5:].startswith("/")
            else spec
            for name, spec in deps.items()
        }
    return manifest


def _install(tree: Path, staging: Path, only: frozenset[str] | None, why: str) -> str | None:
    npm = shutil.which("npm")
    if npm is None:
        return "npm is missing: scripts/install.sh installs Debian's npm"
    staging.mkdir(parents=True, exist_ok=True)  # `staging_beside` may have made it
    manifest = _staged_manifest(tree)
    left_out = []
    if only is not None:
        dev = _section(manifest, "devDependencies")
        left_out = sorted(set(dev) - only)
        manifest["devDependencies"] = {n: v for n, v in dev.items() if n in only}
    (staging / "package.json").write_text(json.dumps(manifest))
    for name in LOCKFILES:
        if (tree / name).is_file():
            shutil.copyfile(tree / name, staging / name)
    try:
        done = run_npm(
            [npm, "install", *FLAGS], staging, INSTALL_TIMEOUT_S, {"NODE_ENV": "development"}
        )
    except subprocess.TimeoutExpired:
        return f"npm install of the repository's dependencies took over {INSTALL_TIMEOUT_S}s"
    if done.returncode != 0:
        return f"npm install of the repository's dependencies failed: {_why(done.stderr)}"
    _finish(staging, manifest, [*left_out, why] if left_out else [])
    return None


def _finish(staging: Path, manifest: dict[str, Any], left_out: list[str]) -> None:
    """The installed folder made ready: stand-ins for the package's own copies, what it holds
    written beside it (`SHOWN`), everything readable to a jail under another uid."""
    modules = staging / "node_modules"
    modules.mkdir(exist_ok=True)
    own = manifest.get("name")
    own = own if isinstance(own, str) else ""
    removed = own_copies(modules, own) if own else []
    for path in removed:
        if path.is_dir():  # a nested copy goes with its parent's
            _stand_in(path, own)
    shown = {
        "packages": _declared(modules, manifest),
        "removed": [str(p.relative_to(staging)) for p in removed],
        "left_out": left_out,
    }
    (staging / SHOWN).write_text(json.dumps(shown))
    for path in [staging, *staging.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() else 0))


def _stand_in(path: Path, own: str) -> None:
    """The copy at `path` replaced by a package that loads the repository's own tree."""
    shutil.rmtree(path)
    path.mkdir()
    manifest = {"name": own, "version": "0.0.0", "main": "index.js", STAND_IN: True}
    (path / "package.json").write_text(json.dumps(manifest))
    (path / "index.js").write_text(STAND_IN_CODE)


def _why(stderr: str) -> str:
    """npm's error in one line: its first two messages, less the code and the log's place."""
    return ": ".join(npm_messages(stderr)[:2])[:300] or "no output"


def own_copies(modules: Path, own: str) -> list[Path]:
    """Every installed copy of the package named `own` under `modules`, at any depth (the
    stand-ins `_stand_in` writes left out)."""
    found = []
    for folder, _, _ in os.walk(modules):
        manifest = Path(folder) / own / "package.json"
        if Path(folder).name == "node_modules" and manifest.is_file():
            try:
                stand_in = json.loads(manifest.read_text(encoding="utf-8")).get(STAND_IN) is True
            except (OSError, ValueError, AttributeError):
                stand_in = False
            if not stand_in:
                found.append(manifest.parent)
    return sorted(found)


def _declared(modules: Path, manifest: dict[str, Any]) -> list[str]:
    """Each declared dependency as installed, `name@version` (sorted; a missing one left out)."""
    names = sorted({n for s in SECTIONS if isinstance(manifest.get(s), dict) for n in manifest[s]})
    found = []
    for name in names:
        try:
            read = json.loads((modules / name / "package.json").read_text(encoding="utf-8"))
            found.append(f"{name}@{read['version']}")
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found
