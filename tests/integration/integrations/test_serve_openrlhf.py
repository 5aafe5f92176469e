"""OpenRLHF 0.11's remote reward path against a real `replicate serve` on the bundled batch.

Its `SingleTurnAgentExecutor` decodes prompt tokens + response tokens with
`skip_special_tokens=False` (the prompt tokens cut from the front when the prompt is longer than
its budget) and POSTs, per sample, `{"query": [query], "prompts": [prompt], "labels": [label]}`
to `--remote_rm_url` (`_fetch_rewards_via_http`, JSON body), the label being the row's
`task_id` (`--label_key task_id`). It reads `rewards` and `scores` back. Reproduced here exactly,
since OpenRLHF itself (vLLM, torch, DeepSpeed) is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from replicate.batch import Batch
from tests.integration.integrations.completions import definition, openrlhf_query
from tests.integration.integrations.server import Server, serving

ROOT = Path(__file__).resolve().parents[3]  # the bundled batch
SYMBOLS = ("samplelib.numeric.clamp", "samplelib.text.slugify", "samplelib.shapes.Interval.length")


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with serving(ROOT, "--workers", "2") as found:
        yield found


def _ask(server: Server, queries: list[str], prompts: list[str], labels: list[str]) -> dict:
    payload = {"query": queries, "prompts": prompts, "labels": labels}
    answer = httpx.post(f"{server.url}/get_reward", json=payload, timeout=180)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_chatml_queries_as_openrlhf_sends_them_score_right_answers_one(server: Server) -> None:
    batch = Batch.open(ROOT)
    tasks = [batch.load(batch.resolve(symbol)) for symbol in SYMBOLS]
    sent: list[tuple[str, str, str, float]] = []
    for task in tasks:
        right = f"```python\n{definition(task)}```"
        name = task.hidden.target.name
        wrong = f"```python\ndef {name}(*args, **kwargs):\n    return None\n```"
        for cut in (False, True):
            for text, expected in ((right, 1.0), (wrong, 0.0)):
                query, prompt = openrlhf_query("chatml", task, text, cut=cut)
                assert query.startswith(prompt) is not cut  # the cut prompt is not a prefix
                sent.append((query, prompt, task.id, expected))
    for query, prompt, label, expected in sent:  # one sample a request, as OpenRLHF does
        got = _ask(server, [query], [prompt], [label])
        assert got["rewards"] == [expected] and got["scores"] == [expected], (label, query[-80:])
        assert got["extra_logs"]["infra_error"] == [0.0]
    queries, prompts, labels, expected_all = (list(column) for column in zip(*sent, strict=True))
    assert _ask(server, queries, prompts, labels)["rewards"] == expected_all  # or batched
