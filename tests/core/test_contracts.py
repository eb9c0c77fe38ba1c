"""The contracts every layer passes on (core/): event names, progress, errors and stop reasons."""

from __future__ import annotations

import pytest
from zolve_client.wire import Progress

from core.errors import EVENT_MESSAGE_CHARS, ErrorType, JobError, StopReason
from core.events import FINAL_EVENTS, STATE_EVENTS, EventName, entered
from core.progress import shard_progress
from core.states import FINAL_STATES, JobState


def test_every_job_state_has_the_event_that_enters_it_and_the_final_ones_end_streams() -> None:
    assert {entered(state) for state in JobState} <= set(EventName)
    assert {entered(state) for state in FINAL_STATES} == FINAL_EVENTS
    assert entered("cancelled") is EventName.CANCELLED, "a plain word names the same event"
    assert set(STATE_EVENTS[JobState.QUEUED]) == {EventName.CREATED, EventName.REQUEUED, EventName.RETRIED}
    for state, names in STATE_EVENTS.items():
        assert entered(state) in names, "the event that enters a state is among those a stream filter matches"


def test_a_sharded_jobs_counters_name_its_rows_and_estimate_while_it_runs() -> None:
    running = shard_progress(3, 12, 3000, elapsed=6.0)
    assert running.to_json("boards") == {
        "shards_done": 3,
        "shards_total": 12,
        "boards": 3000,
        "boards_per_second": 500.0,
        "eta_seconds": 18.0,
    }
    assert Progress.from_json(running.to_json("boards"), "boards") == running
    finished = shard_progress(12, 12, 9000, elapsed=10.0, final=True)
    assert finished.eta_seconds is None and finished.percent() == 100
    assert shard_progress(0, 5, 0, elapsed=None).rows_per_second is None


def test_a_kinds_own_progress_passes_through_with_its_counter() -> None:
    own = {"phase": "playing", "games_done": 30, "games_total": 120, "best": 4.2}
    progress = Progress.from_json(own)
    assert not progress.sharded and progress.to_json() == own
    assert progress.counter() == ("games", 30, 120) and progress.percent() == 25
    assert Progress.from_json({"games_done": 5, "games": 10}).counter() == ("games", 5, 10)
    assert Progress.from_json({"phase": "solving", "width": 5}).counter() is None
    assert Progress.from_json(own).finished().to_json() == {"games_done": 30, "games_total": 120, "best": 4.2}


def test_a_kinds_progress_with_a_sharded_jobs_counters() -> None:
    merged = Progress.from_json({"phase": "walking", "depth": 4}).merged(shard_progress(1, 2, 10, 1.0))
    assert merged.to_json() == {
        "depth": 4,
        "phase": "walking",
        "shards_done": 1,
        "shards_total": 2,
        "rows": 10,
        "rows_per_second": 10.0,
        "eta_seconds": 1.0,
    }


def test_a_job_error_shows_its_traceback_to_admins_only_and_an_event_keeps_its_start() -> None:
    try:
        raise ValueError("x" * 2000)
    except ValueError as exc:
        error = JobError.from_exception(exc)
    assert error.type == "ValueError" and "Traceback" in (error.traceback or "")
    assert error.shown(is_admin=False) == {"type": "ValueError", "message": "x" * 2000}
    assert error.shown(is_admin=True)["traceback"] == error.traceback
    assert error.event_detail() == {"type": "ValueError", "message": "x" * EVENT_MESSAGE_CHARS}
    assert JobError.from_json(error.to_json()) == error
    lost = JobError(ErrorType.WORKER_LOST, "worker lost 3 times").within("shard 0:4")
    assert lost.to_json() == {"type": "WorkerLost", "message": "shard 0:4: worker lost 3 times"}


@pytest.mark.parametrize("reason", list(StopReason))
def test_stop_reasons_read_as_their_words(reason: StopReason) -> None:
    assert str(reason) == reason.value and StopReason(reason.value) is reason
