#!/usr/bin/env bash
# Install what replicate needs on a Debian machine: bubblewrap (the local sandbox), git, nodejs,
# libfaketime, and the Python package itself (editable; with --dev also the dev tools, pytest-xdist
# (scripts/test.sh runs the tests in parallel workers), Ray (for
# the tests of `--executor ray`) and chromium, for the end-to-end test of `replicate report`).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
command -v git >/dev/null 2>&1 || need_apt+=(git)
# libfaketime: gen's second golden run shifts the clock to catch time-dependent outputs
ls /usr/lib/*/faketime/libfaketime.so.1 >/dev/null 2>&1 || need_apt+=(libfaketime)
# nodejs: the Node runner of JavaScript/TypeScript targets (replicate/jail/runner_js/)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
# chromium (--dev only): the end-to-end test opens `replicate report`'s page in a headless browser
if [ "${1:-}" = "--dev" ]; then
  [ -x /usr/bin/chromium ] || need_apt+=(chromium)
  command -v npm >/dev/null 2>&1 || need_apt+=(npm)  # npm pack: the JS/TS language tests
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -q "${need_apt[@]}" >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q "${need_apt[@]}" >/dev/null; }
fi

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"
# with the package its pinned dependencies, serve's httptools and uvloop among them (pyproject.toml)
python3 -m pip install -q --disable-pip-version-check -e ".${extras}"

# Harbor (the `harbor` export format's tests read the export back with it) needs Python >= 3.12:
# a venv of its own, made once. REPLICATE_HARBOR_VENV moves it; no Python 3.12 here: skipped.
if [ "${1:-}" = "--dev" ]; then
  HARBOR_VERSION=0.26.0  # the Harbor the export is checked against (tests/e2e/test_harbor_run.py)
  HARBOR_VENV=${REPLICATE_HARBOR_VENV:-$HOME/.cache/replicate-harbor-venv}
  PY312=""
  for candidate in python3.12 python3.13 /root/.pyenv/versions/3.1[2-9]*/bin/python3; do
    if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' >/dev/null 2>&1; then
      PY312=$candidate; break  # a pyenv shim of a version not selected does not run: skipped
    fi
  done
  have=$("$HARBOR_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("harbor"))' \
    2>/dev/null || true)
  if [ "$have" != "$HARBOR_VERSION" ] && [ -n "$PY312" ]; then
    [ -x "$HARBOR_VENV/bin/python" ] || "$PY312" -m venv "$HARBOR_VENV"
    "$HARBOR_VENV/bin/pip" install -q --disable-pip-version-check "harbor==$HARBOR_VERSION"
  fi
fi
