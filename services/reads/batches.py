"""Batches as the API and the dashboard read them: a batch, a page of its items with their jobs and its
counts by state, every item a page per transaction (its exports), and the dashboard's list of batches."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy.orm import Session

from services.reads.copies import copied
from services.reads.jobs import JobView, job_view
from store import batches as batch_store
from store import listing
from store.db import Database
from store.models import Batch, BatchItem, Job


@dataclass(frozen=True)
class BatchView:
    id: uuid.UUID
    owner_id: int
    kind: str
    item_count: int
    job_count: int
    created_at: datetime
    callback_url: str | None


@dataclass(frozen=True)
class ItemView:
    """One request of a batch: its job (None: rejected, with its field errors)."""

    position: int
    client_id: str
    job_id: uuid.UUID | None
    error: dict[str, Any] | None


class ItemRow(NamedTuple):
    item: ItemView
    job: JobView | None


@dataclass(frozen=True)
class ItemQuery:
    """Which items a page shows: after position `after`, at most `limit` and, after the first, results
    of at most about `max_bytes` (0: any), in these states (None: any)."""

    after: int = -1
    limit: int = 50
    states: list[str] | None = None
    max_bytes: int = 0


@dataclass(frozen=True)
class BatchPage:
    batch: BatchView
    #: items by state (a rejected item counts as `rejected`)
    counts: dict[str, int]
    items: list[ItemRow]
    #: whether items follow this page's
    more: bool = False


@dataclass(frozen=True)
class BatchList:
    batches: list[BatchView]
    counts: dict[uuid.UUID, dict[str, int]]
    next_cursor: str | None


def batch_view(batch: Batch) -> BatchView:
    return copied(BatchView, batch)


def item_rows(rows: Sequence[tuple[BatchItem, Job | None]]) -> list[ItemRow]:
    return [ItemRow(copied(ItemView, item), None if job is None else job_view(job)) for item, job in rows]


def get_batch(db: Database, batch_id: uuid.UUID, owner_id: int | None) -> BatchView | None:
    """The batch if `owner_id` may see it (None: an admin, who sees every batch)."""
    with db.session() as session:
        batch = batch_store.get_batch(session, batch_id, owner_id)
        return None if batch is None else batch_view(batch)


def page_in(session: Session, batch: BatchView, query: ItemQuery) -> BatchPage:
    """The batch's counts and a page of its items, in the caller's transaction."""
    counts = batch_store.item_counts(session, batch.id)
    page = batch_store.page_of_items(
        session,
        batch.id,
        after=query.after,
        limit=query.limit,
        states=query.states,
        max_bytes=query.max_bytes,
    )
    return BatchPage(batch, counts, item_rows(page.items), more=page.more)


def batch_page(db: Database, batch: BatchView, query: ItemQuery) -> BatchPage:
    with db.session() as session:
        return page_in(session, batch, query)


def every_item(db: Database, batch_id: uuid.UUID, page_size: int) -> Iterator[ItemRow]:
    """Every item in submission order, a page per transaction (a batch holds up to 500)."""
    after = -1
    while True:
        with db.session() as session:
            rows = item_rows(batch_store.list_items(session, batch_id, after=after, limit=page_size))
        yield from rows
        if len(rows) < page_size:
            return
        after = rows[-1].item.position


def list_batches(db: Database, owner_id: int | None, *, limit: int, cursor: str | None) -> BatchList:
    """A page of batches newest first (an owner's, or everyone's for None), each with its counts, after
    the cursor of the page before. ValueError: a cursor this service did not make."""
    before = listing.decode_cursor(cursor) if cursor else None
    with db.session() as session:
        rows = batch_store.list_batches(session, owner_id, limit=limit + 1, before=before)
        counts = {batch.id: batch_store.item_counts(session, batch.id) for batch in rows[:limit]}
    next_cursor = listing.encode_cursor(rows[limit - 1]) if len(rows) > limit else None
    return BatchList([batch_view(batch) for batch in rows[:limit]], counts, next_cursor)
