"""The texts of a Harbor task folder: task.toml, the two Dockerfiles, test.sh and solve.sh.

Two images per task, both built offline from the base image (`scripts/docker-setup.sh`):

- the agent's (`environment/Dockerfile`): the workspace at /app, owned by a non-root user, and
  nothing hidden: no batch, no grader, no original;
- the verifier's (`tests/Dockerfile`), in Harbor's separate mode: FROM the shared verifier image
  (this package and its dependencies installed from a wheelhouse), plus a one-task batch at
  /opt/replicate/batch and test.sh.  Only the target file crosses over from the agent's
  container (the task's one artifact), at the same path.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from replicate import __version__
from replicate.sandbox.docker_image import BASE_IMAGE

HARBOR_SCHEMA_VERSION = "1.4"  # harbor.models.task.config.TaskConfig.schema_version
VERIFIER_IMAGE = f"replicate-verifier:{__version__}"
WORKDIR = "/app"
BATCH_IN_IMAGE = "/opt/replicate/batch"
WHEELS_IN_IMAGE = "/opt/replicate/wheels"
CACHE_IN_IMAGE = "/opt/replicate/cache"
AGENT_USER = "agent"
REWARD_DIR = "/logs/verifier"
VERIFIER_WORKDIR = "/tests"  # the verifier image has no /app: Harbor's execs there would fail
# "no-network" makes Harbor's docker environment start an egress-control sidecar whose images
# come from a hub (refused where there is none); "public" with a compose override of the one
# service, `main`, that Harbor leaves alone when the task sets its network itself.
HARBOR_NETWORK_MODE = "public"
COMPOSE_FILE = "docker-compose.yaml"
CLOSED_NETWORK_COMPOSE = """\
# Harbor's docker environment merges this over its own compose file: the container has no
# network (task.toml says "public" only so that Harbor needs no egress sidecar to start).
services:
  main:
    network_mode: none
"""


def toml_value(value: Any) -> str:
    """One TOML value: strings, finite numbers, booleans, lists and inline tables of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML export takes finite numbers only (got {value})")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        items = ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
        return "{" + items + "}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def toml_document(root: Mapping[str, Any], tables: Mapping[str, Mapping[str, Any]]) -> str:
    """Root keys first, then one `[table]` per entry (None values left out)."""
    lines = [f"{key} = {toml_value(value)}" for key, value in root.items() if value is not None]
    for name, table in tables.items():
        lines += ["", f"[{name}]"]
        lines += [f"{json.dumps(k)} = {toml_value(v)}" for k, v in table.items() if v is not None]
    return "\n".join(lines) + "\n"


ENV_WHEELS = "/opt/replicate-env"


def pip_from(wheels: str) -> str:
    """pip run straight from its wheel in `wheels` (the base image has no pip)."""
    return f'python3 "$(ls {wheels}/pip-*.whl | head -n 1)/pip"'


def agent_dockerfile(has_lock: bool, node: Sequence[str] = ()) -> str:
    """The agent's image; with a lock, the repository's pinned dependencies installed offline
    from environment/wheels/ (filled by --build-images); `node`: a script task's lines
    (`harbor_node.agent_lines`)."""
    install = []
    if has_lock:
        pip = pip_from(ENV_WHEELS)
        install = [
            f"COPY wheels/ requirements.txt {ENV_WHEELS}/",
            f"RUN {pip} install --no-index --find-links {ENV_WHEELS} --no-deps "
            f"--break-system-packages --quiet -r {ENV_WHEELS}/requirements.txt "
            f"&& rm -rf {ENV_WHEELS}",
        ]
    return "\n".join(
        [
            "# The agent's image: the repository with the target's body stubbed, TASK.md at its",
            "# root, its pinned dependencies.  Nothing hidden: no batch, no grader, no original.",
            f"FROM {BASE_IMAGE}",
            *install,
            *node,
            f"COPY workspace/ {WORKDIR}/",
            f"RUN useradd --create-home --uid 1000 {AGENT_USER} && chown -R 1000:1000 {WORKDIR}",
            f"WORKDIR {WORKDIR}",
            "",
        ]
    )


def verifier_base_dockerfile(node: Sequence[str] = ()) -> str:
    """The shared verifier image: this package installed offline from `wheels/`; `node`: an
    export with script tasks' lines (`harbor_node.base_lines`)."""
    install = (
        f"{pip_from(WHEELS_IN_IMAGE)} install --no-index --find-links {WHEELS_IN_IMAGE} "
        "--break-system-packages --no-compile --quiet pip replicate-rl"
    )
    return "\n".join(
        [
            "# The verifier's base: replicate-rl and its dependencies from the wheelhouse built on",
            "# the host (`replicate export --format harbor --build-images` fills wheels/).",
            f"FROM {BASE_IMAGE}",
            f"COPY wheels/ {WHEELS_IN_IMAGE}/",
            f"RUN {install}",
            *node,
            f"ENV PIP_NO_INDEX=1 PIP_FIND_LINKS={WHEELS_IN_IMAGE} REPLICATE_CACHE={CACHE_IN_IMAGE}",
            "",
        ]
    )


PREPARE = (
    "from replicate.batch.store import Batch; from replicate.cache import cache_root; "
    "from replicate.jail.context import context_for; "
    "from replicate.jail.by_value_module import module_file; "
    f"batch = Batch.open({BATCH_IN_IMAGE!r}); "
    "[context_for(s, cache_root()) for s in batch.repos()]; "
    "module_file()"  # the by-value module, copied into the cache while it can be written
)


JAIL_PYTHON = f"""#!/bin/sh
# The jail's interpreter in the verifier image: `replicate grade --sandbox plain` runs the
# candidate through it, in a copy of the tree (its working directory), as nobody, so the hidden
# files of this image (root only) are out of the candidate's reach.  The reference itself (run
# to shrink a counterexample, in the pristine tree) is trusted and runs as it is.
# Only a grading copy (a folder of the temporary directory) is opened to nobody: anything else
# (a compile of the cache, a stray working directory) runs as nobody without being opened, so
# no working directory can widen what nobody reads.
here=$(pwd) || exit 125
case "$here" in
  {BATCH_IN_IMAGE}/*) exec @PYTHON@ "$@" ;;
  "${{TMPDIR:-/tmp}}"/replicate-*) chmod -R go+rX "$here" && chmod go+x "$(dirname "$here")" \
    || exit 125 ;;
esac
exec setpriv --reuid=65534 --regid=65534 --clear-groups @PYTHON@ "$@"
"""

# Root-only batch, but for the distribution metadata the jail reads (meta/ and the folders that
# lead to it, which nobody may pass through, not list); each environment's interpreter wrapped.
LOCK_DOWN = " && ".join(
    [
        f"chmod -R go-rwx {BATCH_IN_IMAGE}",
        f"chmod go+x {BATCH_IN_IMAGE} {BATCH_IN_IMAGE}/reference_impls "
        f"{BATCH_IN_IMAGE}/reference_impls/_repos {BATCH_IN_IMAGE}/reference_impls/_repos/*",
        f"(chmod -R go+rX {BATCH_IN_IMAGE}/reference_impls/_repos/*/meta 2>/dev/null || true)",
        f'for py in {CACHE_IN_IMAGE}/envs/*/bin/python; do real=$(readlink -f "$py") '
        '&& rm "$py" && sed "s|@PYTHON@|$real|g" /tests/jail-python.sh > "$py" '
        '&& chmod 755 "$py"; done',
    ]
)


def verifier_dockerfile(node: Sequence[str] = (), base: str = VERIFIER_IMAGE) -> str:
    """One task's verifier: the shared base (`base`: the export's), the one-task batch (root
    only), test.sh; `node`: a script task's lines (`harbor_node.verifier_lines`)."""
    return "\n".join(
        [
            "# The task's verifier (Harbor's separate mode): the hidden inputs, expected outcomes",
            "# and the pristine repository live here only.  The repository's environment is built",
            "# now, offline, from the wheelhouse of the base image.",
            f"FROM {base}",
            *node,
            f"COPY batch/ {BATCH_IN_IMAGE}/",
            "COPY test.sh jail-python.sh /tests/",
            f"RUN chmod 755 /tests/test.sh && python3 -c {shlex.quote(PREPARE)}",
            f"RUN {LOCK_DOWN}",
            "",
        ]
    )


def test_script(task_id: str, target_path: str) -> str:
    """Grades the artifact; writes reward.json (the reward alone: Harbor reads each of its keys
    as a reward), infra.json (whether grading failed) and verdict.json (the full verdict)."""
    candidate = shlex.quote(f"{WORKDIR}/{target_path}")
    return f"""#!/bin/sh
# Grade the target file the agent left (the artifact that crossed over) against this image's
# hidden inputs: `replicate grade --sandbox plain`, since this container is the isolation.
set -u
OUT={REWARD_DIR}
mkdir -p "$OUT"
CANDIDATE={candidate}
if [ ! -f "$CANDIDATE" ] || [ "$(readlink -f "$CANDIDATE")" != "$CANDIDATE" ]; then
  CANDIDATE=$(mktemp)  # nothing left, or a symlink on the way: graded as an empty file
fi
cd / || exit 1  # -I as well: nothing of the working directory shadows what the grader imports
python3 -I -m replicate grade --tasks {BATCH_IN_IMAGE} --task {shlex.quote(task_id)} \\
  --candidate "$CANDIDATE" --sandbox plain >"$OUT/verdict.json" 2>"$OUT/grade.log"
python3 -I - "$OUT" <<'PY'
import json, math, sys
out = sys.argv[1]
try:
    with open(out + "/verdict.json", encoding="utf-8") as handle:
        verdict = json.load(handle)
except (OSError, ValueError):
    verdict = {{}}
reward = verdict.get("reward") if isinstance(verdict, dict) else None
graded = isinstance(reward, (int, float)) and math.isfinite(reward)
infra = not graded or verdict.get("status") == "infra_error"
with open(out + "/reward.json", "w", encoding="utf-8") as handle:
    json.dump({{"reward": float(reward) if graded and not infra else 0.0}}, handle)
with open(out + "/infra.json", "w", encoding="utf-8") as handle:
    json.dump({{"infra_error": infra}}, handle)
PY
"""


def solution_name(target_path: str) -> str:
    """The original target file's name in solution/: `original` and the target's suffix
    (`original.py`, `original.ts`)."""
    return f"original{PurePosixPath(target_path).suffix}"


def solve_script(target_path: str) -> str:
    """The oracle: the original target file put back."""
    dest = shlex.quote(f"{WORKDIR}/{target_path}")
    source = shlex.quote(f"/solution/{solution_name(target_path)}")
    return f"#!/bin/sh\nset -eu\ncp {source} {dest}\n"
