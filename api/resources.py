"""How jobs read in API answers: the status fields (services.resources) and the links."""

from __future__ import annotations

from typing import Any

from flask import url_for

from api.rows import export_endpoint, page_endpoint
from kinds import KINDS
from services.reads.jobs import JobView
from services.resources import job_error, job_fields, progress_of

__all__ = ["job_error", "job_links", "job_resource", "progress_of"]


def job_links(job: JobView) -> dict[str, str]:
    links = {
        "self": url_for("jobs.JobItem", job_id=job.id),
        "cancel": url_for("jobs.cancel_job", job_id=job.id),
        "events": url_for("events.job_events", job_id=job.id),
        "deliveries": url_for("events.job_deliveries", job_id=job.id),
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


def job_resource(job: JobView, *, is_admin: bool) -> dict[str, Any]:
    return {**job_fields(job, is_admin=is_admin), "links": job_links(job)}
