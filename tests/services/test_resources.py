"""How a job reads (services/resources.py): a finished job is in no phase."""

from __future__ import annotations

from core.states import JobState
from services.resources import progress_of
from store.models import Job


def test_a_finished_job_keeps_its_counters_but_no_phase() -> None:
    progress = {"phase": "checking uniqueness", "width": 5}
    running = Job(kind="taiji.solve", state=JobState.RUNNING, progress=progress, shards_total=0)
    assert progress_of(running) == progress
    for state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED):
        finished = Job(kind="taiji.solve", state=state, progress=dict(progress), shards_total=0)
        assert progress_of(finished) == {"width": 5}
    assert progress == {"phase": "checking uniqueness", "width": 5}, "the row's own progress is untouched"
