#!/usr/bin/env bash
# The default job: mint tasks from the bundled sample library in corpus/, score the example agent
# (prepared attempts: some right, some partly right, some wrong) on the tasks it has attempts
# for, and print the reward table.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
out="${REPLICATE_DEMO_OUT:-out/demo}"
rm -rf "$out"
replicate gen --repo corpus/samplelib --out "$out/batch"
tasks=()
for attempt in examples/attempts/*.py; do
  tasks+=(--task "$(basename "$attempt" .py)")
done
replicate run --tasks "$out/batch" --out "$out/run" --workers 2 "${tasks[@]}" \
  --agent "python $PWD/examples/prepared_agent.py" --mount "$PWD/examples"
