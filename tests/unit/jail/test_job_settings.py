"""A task's grading settings reach the runner's job: the cap on an iterator argument and whether
to count how far each was read too; a task minted before the cap existed (its settings lack the
field) keeps its `max_items`, and one minted before the counts asks for none."""

from __future__ import annotations

from replicate.core import GradingSettings
from replicate.gen.settings import ARG_ITEMS, GOLDEN_SETTINGS, WIDEN_SETTINGS, timing_settings
from replicate.jail.calls import job_dict
from tests.targets import made_target

TARGET = made_target()


def test_a_grader_5_task_keeps_max_items_for_its_arguments() -> None:
    recorded = {"call_timeout_s": 1.0, "total_timeout_s": 30.0, "max_items": 10_000}
    old = GradingSettings.model_validate(recorded)
    assert old.max_arg_items is None and old.arg_items == 10_000
    job = job_dict(TARGET, [], old, encode_inputs=False)
    assert (job["max_items"], job["max_arg_items"]) == (10_000, 10_000)


def test_gen_mints_with_the_argument_cap_and_records_it() -> None:
    minted = timing_settings(0.01, 0.2)
    assert minted.max_arg_items == ARG_ITEMS < minted.max_items
    job = job_dict(TARGET, [], minted, encode_inputs=False)
    assert (job["max_items"], job["max_arg_items"]) == (10_000, ARG_ITEMS)
    # the reference's own runs at gen time encode the same way the task then grades
    assert GOLDEN_SETTINGS.arg_items == WIDEN_SETTINGS.arg_items == ARG_ITEMS
    loaded = GradingSettings.model_validate_json(minted.model_dump_json())
    assert loaded.arg_items == ARG_ITEMS


def test_gen_mints_with_arg_reads_and_a_grader_6_task_runs_without() -> None:
    """Grader 7 outcomes say how far each iterator argument was read; a task minted before
    (its settings lack the field) asks the runner for no counts, and compares none."""
    minted = timing_settings(0.01, 0.2)
    assert minted.arg_reads and GOLDEN_SETTINGS.arg_reads and WIDEN_SETTINGS.arg_reads
    assert job_dict(TARGET, [], minted, encode_inputs=False)["arg_reads"] is True
    old = GradingSettings.model_validate({"call_timeout_s": 1.0, "max_arg_items": 1_000})
    assert job_dict(TARGET, [], old, encode_inputs=False)["arg_reads"] is False
