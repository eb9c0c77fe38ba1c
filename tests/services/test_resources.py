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


def test_a_sharded_kind_without_rows_counts_shards_and_no_rows() -> None:
    """mastermind.play stores no rows: its progress said `rows: 0` and the dashboard "19/19 shards, 0 rows"
    (issue 50, item 8); a kind with rows names them as before."""
    from api.admin.present import progress_label

    games = Job(kind="mastermind.play", state=JobState.SUCCEEDED, progress=None, shards_total=19)
    games.shards_done, games.rows_done = 19, 0
    assert progress_of(games) == {"shards_done": 19, "shards_total": 19, "eta_seconds": None}
    assert progress_label(games) == "19/19 shards"
    boards = Job(kind="planetx.enumerate", state=JobState.SUCCEEDED, progress=None, shards_total=4)
    boards.shards_done, boards.rows_done = 4, 4446
    assert progress_of(boards)["boards"] == 4446 and "rows" not in progress_of(boards)
    assert progress_label(boards) == "4/4 shards, 4,446 boards"
