#!/usr/bin/env bash
# Make the docker sandbox (`--sandbox docker`) usable on a Debian machine; safe to run again.
#   1. install the engine (docker.io) and debootstrap when missing;
#   2. start dockerd (no bridge, no iptables: containers run with network "none" or "host") when
#      no engine answers, and wait for it;
#   3. build the base image when missing (python -m replicate.sandbox.docker_image:
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

engine_answers() { $SUDO docker info >/dev/null 2>&1; }

if ! engine_answers; then
  echo "docker-setup: starting dockerd (log: $LOG)"
  $SUDO sh -c "nohup dockerd --iptables=false --bridge=none </dev/null >'$LOG' 2>&1 &"
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
