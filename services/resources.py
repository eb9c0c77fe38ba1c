"""How a job reads to its client, whoever tells it: the API's status resource (api.resources adds the
links) and a webhook's body are the same fields."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from zolve_client.wire import Progress

from core import tracing
from core.errors import JobError
from core.progress import shard_progress
from kinds import KINDS
from services.reads.jobs import JobView


def seconds_between(start: datetime | None, end: datetime | None) -> float | None:
    if start is None:
        return None
    return round(((end or datetime.now(UTC)) - start).total_seconds(), 3)


def progress_of(job: JobView) -> dict[str, Any] | None:
    """What the kind's run last reported and, for a sharded job, the service's counters: shards done of
    the total, rows so far (named as the kind names them), rows/s and an ETA from the shards' pace. A
    finished job keeps its counters but no `phase` (it is no longer in one)."""
    if job.progress is None and not job.shards_total:
        return None
    kind = KINDS.get(job.kind)
    progress = Progress.from_json(job.progress)
    if job.shards_total:
        elapsed = seconds_between(job.started_at, job.finished_at)
        counters = shard_progress(
            job.shards_done, job.shards_total, job.rows_done, elapsed, final=job.is_final
        )
        progress = progress.merged(counters)
    if job.is_final:
        progress = progress.finished()
    return progress.to_json(kind.counted_rows if kind else "rows")


def job_error(job: JobView, *, is_admin: bool) -> dict[str, Any] | None:
    """A job's error as its caller may see it: the traceback is for admins only."""
    return JobError.from_json(job.error).shown(is_admin=is_admin) if job.error else None


def job_fields(job: JobView, *, is_admin: bool) -> dict[str, Any]:
    """Everything of the status resource but its links."""
    return {
        "id": job.id,
        "kind": job.kind,
        "state": job.state,
        "params": job.params,
        "time_limit": job.time_limit,
        "priority": job.priority,
        "queue_timeout": job.queue_timeout,
        "progress": progress_of(job),
        "result": job.result,
        "error": job_error(job, is_admin=is_admin),
        "attempts": job.attempts,
        "cancel_requested": job.cancel_requested,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        # a job that ended without starting (expired, cancelled while queued) waited until it ended
        "queued_seconds": seconds_between(job.created_at, job.started_at or job.finished_at),
        "run_seconds": seconds_between(job.started_at, job.finished_at),
        "callback_url": job.callback_url,
        **({"trace_id": tracing.trace_id(job.trace_parent)} if is_admin and job.trace_parent else {}),
    }
