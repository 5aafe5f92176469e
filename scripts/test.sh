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
# In parallel pytest-xdist workers (tests/conftest.py): the layers mostly wait on jails, git and
# subprocesses, about half a core each, so one worker more than the cores (at most 8);
# REPLICATE_TEST_WORKERS overrides it (0: no workers, in this process, one test at a time).
workers=${REPLICATE_TEST_WORKERS:-$(( $(nproc) < 8 ? $(nproc) + 1 : 8 ))}
python3 -m pytest -q -n "$workers" --dist loadgroup --no-loadscope-reorder "$@"
