"""A job as read (services/reads/jobs.py): a copy that outlives its row object, equal to another read
only while nothing a reader sees has changed (the job cache keeps its rendered answers on that)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from core.states import JobState
from services.reads.batches import item_rows
from services.reads.jobs import job_view
from store.models import BatchItem, Job

NOW = datetime(2025, 1, 1, tzinfo=UTC)


def _row(**changes: object) -> Job:
    values: dict[str, object] = {
        "id": uuid.UUID(int=1),
        "owner_id": 7,
        "kind": "dice",
        "state": JobState.RUNNING,
        "params": {"dice": 3},
        "time_limit": 60.0,
        "priority": 0,
        "queue_timeout": None,
        "cancel_requested": False,
        "progress": None,
        "result": None,
        "error": None,
        "attempts": 1,
        "retries": 0,
        "lease_owner": "host:1:boot",
        "lease_expires_at": NOW,
        "heartbeat_at": NOW,
        "created_at": NOW,
        "started_at": NOW,
        "finished_at": None,
        "updated_at": NOW,
        "shards_total": 0,
        "shards_done": 0,
        "rows_done": 0,
        "rows_job_id": None,
        "callback_url": None,
        "trace_parent": None,
    }
    return Job(**{**values, **changes})


def test_a_read_is_a_copy_that_the_rows_later_changes_leave_alone() -> None:
    row = _row()
    view = job_view(row)
    row.state = JobState.SUCCEEDED
    assert view.state == JobState.RUNNING and not view.is_final
    assert job_view(row).is_final


def test_two_reads_are_equal_until_the_row_moves() -> None:
    assert job_view(_row()) == job_view(_row())
    assert job_view(_row()) != job_view(_row(heartbeat_at=NOW + timedelta(seconds=1)))
    assert job_view(_row()) != job_view(_row(progress={"phase": "solving"}))


def test_a_batch_item_without_a_job_reads_as_rejected_with_no_job() -> None:
    rejected = BatchItem(position=0, client_id="a", job_id=None, error={"dice": ["too many"]})
    solved = BatchItem(position=1, client_id="b", job_id=uuid.UUID(int=1), error=None)
    [first, second] = item_rows([(rejected, None), (solved, _row())])
    item, job = first
    assert (item.client_id, item.error, job) == ("a", {"dice": ["too many"]}, None)
    assert second.job is not None and second.job.id == second.item.job_id
