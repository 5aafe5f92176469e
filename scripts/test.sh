#!/usr/bin/env bash
# Install, lint, type-check, check the import direction and run every test (unit, contract,
# end-to-end and red team).
# Fast loop while working: python -m pytest -m "not e2e"
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --dev
python3 -m ruff check .
python3 -m mypy
lint-imports  # the layers contract in pyproject.toml (ARCHITECTURE.md)
python3 -m pytest -q "$@"
