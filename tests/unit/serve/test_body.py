"""A request body's fields, as a grading process decodes them for the server."""

from __future__ import annotations

import json
import pickle

import pytest

from replicate.serve.body import GradeBody, Problem, RewardBody, cut


def _data(body: object) -> bytes:
    return json.dumps(body).encode()


def test_an_id_longer_than_any_comes_back_as_a_prefix_still_too_long() -> None:
    hostile = "a<" * 100_000
    got = GradeBody.of(_data({"task_id": hostile, "candidate": "x"}), bound=40)
    assert got.task_id == hostile[:201] and got.candidate == "x"
    assert len(cut(hostile, 500)) == 501  # longer than the longest name, so still unknown
    assert cut("pkg.mod.f", 40) == "pkg.mod.f"


def test_reward_labels_are_cut_and_lists_must_match() -> None:
    body = {"query": ["q", "r"], "prompts": ["", ""], "labels": ["t", "x" * 1000]}
    got = RewardBody.of(_data(body), bound=10)
    assert got.labels == ["t", "x" * 201] and got.queries == ["q", "r"]
    with pytest.raises(Problem) as raised:
        RewardBody.of(_data({**body, "labels": ["t"]}), bound=10)
    assert raised.value.status == 400 and "same length" in raised.value.message


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"\xff", "not JSON"),
        (b"[1]", "JSON object"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (_data({"task_id": 1, "candidate": "x"}), "'task_id'"),
    ],
    ids=["not-utf8", "a-list", "deep", "id-not-a-string"],
)
def test_bad_bodies_are_400(data: bytes, words: str) -> None:
    with pytest.raises(Problem) as raised:
        GradeBody.of(data, bound=10)
    assert raised.value.status == 400 and words in raised.value.message


def test_a_problem_raised_in_a_worker_process_crosses_back_whole() -> None:
    """A worker's exception comes back pickled: status and message survive (a plain Exception
    subclass with this constructor would not unpickle at all)."""
    back = pickle.loads(pickle.dumps(Problem(413, "too big")))
    assert (back.status, back.message) == (413, "too big")
