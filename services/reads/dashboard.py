"""What the dashboard reads (straight from PostgreSQL, whatever the broker): the overview's aggregates, the
jobs table with its owners' names, a job's page (its history, shards and webhook deliveries) and the keys
page. The overview's figures are plain values already (store.dashboard); jobs and events come as read
models."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from services.reads.deliveries import delivery_views
from services.reads.events import EventView, event_view
from services.reads.jobs import JobFilter, JobPage, JobView, job_view, page_view
from services.reads.keys import KeyView, key_view
from store import dashboard, listing
from store import keys as key_store
from store.dashboard import Minute, Overview, ShardCell
from store.db import Database

__all__ = [
    "JobDetail",
    "JobFilter",
    "JobTable",
    "KeyShares",
    "Minute",
    "Overview",
    "ShardCell",
    "job_detail",
    "job_table",
    "key_shares",
    "overview",
]


def overview(db: Database, *, alive_within: float) -> Overview:
    """Jobs by state, queues by kind, the workers alive and the last hour, minute by minute."""
    with db.session() as session:
        return dashboard.overview(session, alive_within=alive_within)


@dataclass(frozen=True)
class JobTable:
    page: JobPage
    #: each owner's name and visible prefix, by key id
    owners: dict[int, str]


def job_table(db: Database, where: JobFilter, *, limit: int, cursor: str | None) -> JobTable:
    """A page of the jobs table, newest first. ValueError: a cursor this service did not make, or an id
    query no job id starts with."""
    with db.session() as session:
        page = page_view(listing.find_jobs(session, where, limit=limit, cursor=cursor))
        return JobTable(page, dashboard.key_names(session, {job.owner_id for job in page.items}))


@dataclass(frozen=True)
class JobDetail:
    """A job's page: the job, its history and its webhook deliveries (and its batch's, each with every
    attempt), beside what store.dashboard reads of its shards and of the keys named (plain values)."""

    job: JobView
    history: list[EventView]
    deliveries: list[dict[str, Any]]
    #: key id → name, for the owner and every actor in the history
    keys: dict[int, str]
    shard_counts: dict[str, int]
    shards: list[ShardCell]
    active_shards: list[ShardCell]


def job_detail(db: Database, job_id: uuid.UUID, *, stuck_after: float) -> JobDetail | None:
    """A job's page, whoever owns it (the caller checks who may see it); None: no such job."""
    with db.session() as session:
        found = dashboard.job_detail(session, job_id, stuck_after=stuck_after)
        if found is None:
            return None
        return JobDetail(
            job=job_view(found.job),
            history=[event_view(event) for event in found.history],
            deliveries=delivery_views(session, job_id),
            keys=found.keys,
            shard_counts=found.shard_counts,
            shards=found.shards,
            active_shards=found.active_shards,
        )


@dataclass(frozen=True)
class KeyShares:
    keys: list[KeyView]
    #: each key's unfinished jobs by state (queued, running, cancelling)
    unfinished: dict[int, dict[str, int]]


def key_shares(db: Database) -> KeyShares:
    """Every key with its share, beside the work it has waiting and running."""
    with db.session() as session:
        rows = key_store.list_keys(session)
        return KeyShares([key_view(row) for row in rows], dashboard.unfinished_by_key(session))
