"""Jobs as the API and the dashboard read them: one job, many at once (the job cache's loader), keyset pages
of a client's jobs, and the items of a result stored in pieces."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.states import FINAL_STATES, JobState
from services.reads.copies import copied
from store import jobs as job_store
from store import listing, results
from store.db import Database
from store.listing import JobFilter
from store.models import Job

__all__ = [
    "JobFilter",
    "JobPage",
    "JobView",
    "Loader",
    "find_jobs",
    "get_job",
    "job_view",
    "page_view",
    "read_jobs",
    "result_items",
]


@dataclass(frozen=True)
class JobView:
    """A job as read at one moment: what its answers, pages and webhooks show, and the columns that move
    while it runs (heartbeat_at, updated_at), so that two copies are equal only if nothing a reader sees
    has changed."""

    id: uuid.UUID
    owner_id: int
    kind: str
    state: JobState
    params: dict[str, Any]
    time_limit: float
    priority: int
    queue_timeout: float | None
    cancel_requested: bool
    progress: dict[str, Any] | None
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    attempts: int
    retries: int
    lease_owner: str | None
    lease_expires_at: datetime | None
    heartbeat_at: datetime | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    updated_at: datetime
    shards_total: int
    shards_done: int
    rows_done: int
    rows_job_id: uuid.UUID | None
    callback_url: str | None
    trace_parent: str | None

    @property
    def is_final(self) -> bool:
        return self.state in FINAL_STATES


def job_view(job: Job) -> JobView:
    return copied(JobView, job)


@dataclass(frozen=True)
class JobPage:
    items: list[JobView]
    next_cursor: str | None


def page_view(page: listing.Page) -> JobPage:
    return JobPage([job_view(job) for job in page.items], page.next_cursor)


#: reads these jobs (those that exist) in one query
Loader = Callable[[Sequence[uuid.UUID]], list[JobView]]


def get_job(db: Database, job_id: uuid.UUID, owner_id: int | None) -> JobView | None:
    """The job, if `owner_id` may see it (None: an admin, who sees every job)."""
    with db.session() as session:
        job = job_store.get_job(session, job_id, owner_id)
        return None if job is None else job_view(job)


def read_jobs(db: Database) -> Loader:
    """The job cache's loader on this database: whoever owns them."""

    def load(job_ids: Sequence[uuid.UUID]) -> list[JobView]:
        with db.session() as session:
            return [job_view(job) for job in job_store.get_jobs(session, job_ids)]

    return load


def find_jobs(db: Database, where: JobFilter, *, limit: int, cursor: str | None = None) -> JobPage:
    """Newest first, keyset pages (store.listing). ValueError: a cursor this service did not make, or an
    id query no job id starts with."""
    with db.session() as session:
        return page_view(listing.find_jobs(session, where, limit=limit, cursor=cursor))


def result_items(db: Database, job_id: uuid.UUID, after: int, limit: int) -> tuple[list[Any], int | None]:
    """Items of a result stored in pieces, in order after position `after`; the next page's cursor."""
    with db.session() as session:
        return results.page(session, job_id, after, limit)
