"""How a job reads to its client, whoever tells it: the API's status resource (api.resources adds the
links) and a webhook's body are the same fields."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kinds import KINDS
from store.models import Job


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None:
        return None
    return round(((end or datetime.now(UTC)) - start).total_seconds(), 3)


def progress_of(job: Job) -> dict[str, Any] | None:
    """Sharded jobs: shards done/total, rows so far, rows/s and an ETA from the shards' pace. A finished
    job keeps its counters but no `phase` (it is no longer in one)."""
    progress = dict(job.progress) if job.progress is not None else None
    if progress is not None and job.is_final:
        progress.pop("phase", None)
    if not job.shards_total:
        return progress
    kind = KINDS.get(job.kind)
    noun = kind.rows_name if kind else "rows"
    elapsed = seconds_between(job.started_at, job.finished_at) or 0.0
    progress = progress or {}
    progress.update(
        {
            "shards_done": job.shards_done,
            "shards_total": job.shards_total,
            noun: job.rows_done,
            f"{noun}_per_second": round(job.rows_done / elapsed, 1) if elapsed else None,
            "eta_seconds": None,
        }
    )
    if not job.is_final and job.shards_done and elapsed:
        progress["eta_seconds"] = round(elapsed / job.shards_done * (job.shards_total - job.shards_done), 1)
    return progress


def job_error(job: Job, *, is_admin: bool) -> dict[str, Any] | None:
    """A job's error as its caller may see it: the traceback is for admins only."""
    error = dict(job.error) if job.error else None
    if error and not is_admin:
        error.pop("traceback", None)
    return error


def job_fields(job: Job, *, is_admin: bool) -> dict[str, Any]:
    """Everything of the status resource but its links."""
    return {
        "id": job.id,
        "kind": job.kind,
        "state": job.state,
        "params": job.params,
        "time_limit": job.time_limit,
        "progress": progress_of(job),
        "result": job.result,
        "error": job_error(job, is_admin=is_admin),
        "attempts": job.attempts,
        "cancel_requested": job.cancel_requested,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "queued_seconds": seconds_between(job.created_at, job.started_at),
        "run_seconds": seconds_between(job.started_at, job.finished_at),
        "callback_url": job.callback_url,
    }
