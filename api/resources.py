"""How jobs read in API answers: state, progress (with an ETA for sharded jobs), timings, links."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import url_for

from api.rows import export_endpoint, page_endpoint
from kinds import KINDS
from store.models import Job


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None:
        return None
    return round(((end or datetime.now(UTC)) - start).total_seconds(), 3)


def progress_of(job: Job) -> dict[str, Any] | None:
    """Sharded jobs: shards done/total, rows so far, rows/s and an ETA from the shards' pace."""
    if not job.shards_total:
        return job.progress
    kind = KINDS.get(job.kind)
    noun = kind.rows_name if kind else "rows"
    elapsed = _seconds(job.started_at, job.finished_at) or 0.0
    progress = dict(job.progress or {})
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


def job_links(job: Job) -> dict[str, str]:
    links = {
        "self": url_for("jobs.JobItem", job_id=job.id),
        "cancel": url_for("jobs.cancel_job", job_id=job.id),
    }
    if isinstance(job.result, dict) and job.result.get("paged"):
        links["result_items"] = url_for("jobs.result_items", job_id=job.id)
    kind = KINDS.get(job.kind)
    if kind and kind.rows:
        name = kind.rows.name
        links["rows"] = url_for(page_endpoint(name), job_id=job.id)
        links["ndjson"] = url_for(export_endpoint(name, "ndjson"), job_id=job.id)
        links["csv"] = url_for(export_endpoint(name, "csv"), job_id=job.id)
    return links


def job_error(job: Job, *, is_admin: bool) -> dict[str, Any] | None:
    """A job's error as its caller may see it: the traceback is for admins only."""
    error = dict(job.error) if job.error else None
    if error and not is_admin:
        error.pop("traceback", None)
    return error


def job_resource(job: Job, *, is_admin: bool) -> dict[str, Any]:
    error = job_error(job, is_admin=is_admin)
    return {
        "id": job.id,
        "kind": job.kind,
        "state": job.state,
        "params": job.params,
        "time_limit": job.time_limit,
        "progress": progress_of(job),
        "result": job.result,
        "error": error,
        "attempts": job.attempts,
        "cancel_requested": job.cancel_requested,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "queued_seconds": _seconds(job.created_at, job.started_at),
        "run_seconds": _seconds(job.started_at, job.finished_at),
        "links": job_links(job),
    }
