"""Completions as each trainer hands them to our reward functions, graded for real on the bundled
batch (specs/ and reference_impls/ at the root, minted from corpus/samplelib).

verl and TRL decode the response alone with special tokens skipped (TRL's conversational form as
an assistant message); OpenRLHF decodes prompt + response with every special token kept, after
the chat template of the model (ChatML, Llama 3, Gemma, Mistral, Phi-3, DeepSeek, a GPT-2 family
model with no template), and cuts a long prompt from the front. Each format carries a right
answer (1.0) and a wrong one (0.0: it returns the first argument or a constant, as a degenerate
program does). One grader serves the module (`grader_for`, kept per process).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from replicate.batch import Batch, LoadedTask
from replicate.integrations import openrlhf, trl, verl
from replicate.integrations.grading import TASKS_ENV
from tests.integration.integrations.completions import (
    TEMPLATES,
    definition,
    openrlhf_query,
    prompt_text,
)

ROOT = Path(__file__).resolve().parents[3]  # the bundled batch
INFO = {"tasks_dir": str(ROOT)}
CLAMP, LENGTH = "samplelib.numeric.clamp", "samplelib.shapes.Interval.length"
WRONG = {
    CLAMP: "def clamp(value, low, high):\n    return value\n",
    LENGTH: "def length(self):\n    return 0\n",
}


@pytest.fixture(scope="module")
def batch() -> Batch:
    return Batch.open(ROOT)


def fenced(code: str) -> str:
    return f"```python\n{code}```"


# What the model wrote (the response alone), in each shape a model writes it.
Shape = Callable[[str], str]
SHAPES: dict[str, Shape] = {
    "fence": fenced,
    "prose_fence": lambda c: f"Here is the implementation:\n\n{fenced(c)}\n\nIt handles the edges.",
    "bare_def": lambda c: c,
    "prose_def": lambda c: f"Sure. The function:\n\n{c}\nThis follows the docstring.",
    "two_blocks": lambda c: f"{fenced(c)}\n\nUsage:\n\n```python\nprint('example')\n```",
    "draft_then_final": lambda c: f"A draft:\n```python\nx = 1\n```\nFinal:\n{fenced(c)}",
    "unterminated": lambda c: f"```python\n{c}",
    "think": lambda c: f"<think>\nFirst try:\n```python\ndef nope(:\n```\n</think>\n\n{fenced(c)}",
    "crlf": lambda c: fenced(c).replace("\n", "\r\n"),
    "tilde": lambda c: f"~~~py\n{c}~~~",
}


@dataclass(frozen=True)
class Case:
    name: str
    trainer: str  # verl | trl | trl_chat | openrlhf
    symbol: str
    right: bool
    shape: str
    template: str | None = None
    cut: bool = False  # OpenRLHF cut the prompt from the front
    thinking: str = ""  # written before the answer (a thinking model)


def _cases() -> list[Case]:
    plan: list[tuple[str, str, str | None, bool, str]] = [
        ("verl", "fence", None, False, ""),
        ("verl", "prose_fence", None, False, ""),
        ("verl", "bare_def", None, False, ""),
        ("verl", "prose_def", None, False, ""),
        ("verl", "two_blocks", None, False, ""),
        ("verl", "draft_then_final", None, False, ""),
        ("verl", "unterminated", None, False, ""),
        ("verl", "think", None, False, ""),
        ("verl", "crlf", None, False, ""),
        ("trl", "tilde", None, False, ""),
        ("trl", "think", None, False, ""),
        ("trl_chat", "prose_fence", None, False, ""),
        ("trl_chat", "two_blocks", None, False, ""),
        ("openrlhf", "fence", "chatml", False, ""),
        ("openrlhf", "bare_def", "chatml", False, ""),
        ("openrlhf", "prose_fence", "chatml_pad", False, ""),
        ("openrlhf", "fence", "chatml", True, ""),
        ("openrlhf", "fence", "chatml", False, "<think>\nLet me see.\n</think>\n\n"),
        ("openrlhf", "fence", "llama3", False, ""),
        ("openrlhf", "unterminated", "llama3", True, ""),
        ("openrlhf", "fence", "gemma", False, ""),
        ("openrlhf", "prose_def", "gemma", True, ""),
        ("openrlhf", "fence", "mistral", False, ""),
        ("openrlhf", "two_blocks", "mistral", True, ""),
        ("openrlhf", "fence", "phi3", False, ""),
        ("openrlhf", "fence", "deepseek", False, "Think it through.\n</think>\n\n"),
        ("openrlhf", "fence", "deepseek", True, "Cut short, still thinking.\n</think>\n"),
        ("openrlhf", "bare_def", "gpt2", False, ""),
        ("openrlhf", "fence", "gpt2", True, ""),
    ]
    cases = []
    for index, (trainer, shape, template, cut, thinking) in enumerate(plan):
        symbol = (CLAMP, LENGTH)[index % 2]
        for right in (True, False):
            name = f"{trainer}-{template or 'text'}-{shape}{'-cut' if cut else ''}"
            name += f"{'-think' if thinking else ''}-{'right' if right else 'wrong'}"
            cases.append(Case(name, trainer, symbol, right, shape, template, cut, thinking))
    return cases


CASES = _cases()


def _reward(case: Case, task: LoadedTask, text: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    if case.trainer == "verl":
        return verl.compute_score("replicate", text, task.id, INFO)["score"]
    if case.trainer in ("trl", "trl_chat"):
        completion: Any = text
        if case.trainer == "trl_chat":
            completion = [{"role": "assistant", "content": text}]
        prompt = [{"role": "user", "content": prompt_text(task)}]
        [reward] = trl.reward_func([prompt], [completion], [task.id], extra_info=[INFO])
        return reward
    monkeypatch.setenv(TASKS_ENV, str(ROOT))
    assert case.template is not None
    query, prompt = openrlhf_query(case.template, task, text, cut=case.cut)
    result = openrlhf.reward_func([query], [prompt], [task.id])
    assert list(result["extra_logs"]["infra_error"]) == [0.0]
    return float(result["rewards"][0])


def test_the_corpus_is_large_and_covers_every_trainer_and_template() -> None:
    assert len(CASES) >= 40
    assert {c.trainer for c in CASES} == {"verl", "trl", "trl_chat", "openrlhf"}
    assert {c.template for c in CASES} - {None} == set(TEMPLATES)
    assert {c.shape for c in CASES} == set(SHAPES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_completion_is_graded_as_its_code(
    case: Case, batch: Batch, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = batch.load(batch.resolve(case.symbol))
    code = definition(task) if case.right else WRONG[case.symbol]
    text = case.thinking + SHAPES[case.shape](code)
    assert _reward(case, task, text, monkeypatch) == (1.0 if case.right else 0.0)
