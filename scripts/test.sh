#!/usr/bin/env bash
# Install, lint, type-check and run every test (unit, contract and end-to-end).
# Fast loop while working: python -m pytest -m "not e2e"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --dev
python3 -m ruff check .
python3 -m mypy
python3 -m pytest -q "$@"
