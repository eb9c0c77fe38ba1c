"""Batches: many requests of one kind in one call. Identical requests share one job; a rejected request
is kept with its errors and never fails the others."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, String, Text, cast, func, literal, select, true, tuple_
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.events import EventName
from core.states import REJECTED_ITEM, JobState
from store import events
from store.jobs import IdempotencyConflict, job_row, params_hash
from store.models import Batch, BatchItem, Job


@dataclass(frozen=True)
class NewItem:
    client_id: str
    #: validated params, or None when the item was rejected
    params: dict[str, Any] | None
    error: dict[str, Any] | None = None


def create_batch(
    session: Session,
    *,
    owner_id: int,
    kind: str,
    items: list[NewItem],
    time_limit: float,
    priority: int = 0,
    queue_timeout: float | None = None,
    trace_parent: str | None = None,
    callback_url: str | None = None,
    idempotency_key: str | None = None,
    request_hash: str | None = None,
) -> tuple[Batch, list[uuid.UUID], bool]:
    """Insert the batch, its items and one queued job per distinct params; returns the batch, the jobs to
    publish and whether it was made now. With an Idempotency-Key the batch's row goes in first, under a
    savepoint: when a concurrent request with the same key made its batch first, that batch is returned
    (made now: False), or IdempotencyConflict raised if that request was another (see replayed_batch)."""
    batch = Batch(
        id=uuid.uuid4(),
        owner_id=owner_id,
        kind=kind,
        item_count=len(items),
        job_count=0,
        callback_url=callback_url,
        idempotency_key=idempotency_key,
        request_hash=request_hash,
    )
    if idempotency_key is None:
        session.add(batch)
    else:
        try:
            with session.begin_nested():  # flushed at its end: a concurrent twin's key raises here
                session.add(batch)
        except IntegrityError:
            earlier = replayed_batch(session, owner_id, idempotency_key, request_hash or "")
            if earlier is None:
                raise
            return earlier, [], False
    jobs_by_hash: dict[str, Job] = {}
    rows = []
    for position, item in enumerate(items):
        job = None
        if item.params is not None:
            digest = params_hash(kind, item.params)
            job = jobs_by_hash.get(digest)
            if job is None:
                # held: see store.dispatch
                order = {"priority": priority, "queue_timeout": queue_timeout, "trace_parent": trace_parent}
                job = job_row(owner_id, kind, item.params, digest, time_limit, **order)
                jobs_by_hash[digest] = job
        rows.append((position, item, job))
    session.add_all(jobs_by_hash.values())
    batch.job_count = len(jobs_by_hash)
    session.flush()
    session.add_all(
        BatchItem(
            batch_id=batch.id,
            position=position,
            client_id=item.client_id,
            job_id=job.id if job else None,
            error=item.error,
        )
        for position, item, job in rows
    )
    for job in jobs_by_hash.values():
        in_batch = {"batch": str(batch.id)}
        events.record(session, job.id, EventName.CREATED, actor_key_id=owner_id, detail=in_batch)
    session.flush()
    return batch, [job.id for job in jobs_by_hash.values()], True


def replayed_batch(session: Session, owner_id: int, idempotency_key: str, request_hash: str) -> Batch | None:
    """The batch an earlier request with this Idempotency-Key made, if any; IdempotencyConflict when that
    request was another."""
    batch = session.scalar(
        select(Batch).where(Batch.owner_id == owner_id, Batch.idempotency_key == idempotency_key)
    )
    if batch is not None and batch.request_hash != request_hash:
        raise IdempotencyConflict("this Idempotency-Key was already used with a different request body")
    return batch


def get_batch(session: Session, batch_id: uuid.UUID, owner_id: int | None) -> Batch | None:
    """The batch if it exists and (unless owner_id is None, for admins) belongs to the owner."""
    batch = session.get(Batch, batch_id)
    if batch is None or (owner_id is not None and batch.owner_id != owner_id):
        return None
    return batch


def list_batches(
    session: Session,
    owner_id: int | None,
    *,
    limit: int = 25,
    before: tuple[datetime, uuid.UUID] | None = None,
) -> list[Batch]:
    """Batches newest first (of one owner, or everyone's for None), after the (created_at, id) `before`."""
    return list(session.scalars(batches_query(owner_id, limit=limit, before=before)))


def batches_query(
    owner_id: int | None, *, limit: int, before: tuple[datetime, uuid.UUID] | None = None
) -> Select[Batch]:
    """list_batches' query: an owner's read their index (owner_id, created_at), everyone's (created_at,
    id)."""
    query = select(Batch).order_by(Batch.created_at.desc(), Batch.id.desc()).limit(limit)
    if owner_id is not None:
        query = query.where(Batch.owner_id == owner_id)
    if before is not None:
        after = tuple_(literal(before[0], Batch.created_at.type), literal(before[1], Batch.id.type))
        query = query.where(tuple_(Batch.created_at, Batch.id) < after)
    return query


def _item_state() -> ColumnElement[str]:
    """An item's state: its job's, or `rejected` (typed as plain text: `rejected` is no JobState)."""
    return func.coalesce(Job.state, REJECTED_ITEM, type_=String)


def item_counts(session: Session, batch_id: uuid.UUID) -> dict[str, int]:
    """How many items are in each state (a rejected item counts as `rejected`)."""
    state = _item_state()
    rows = session.execute(
        select(state, func.count())
        .select_from(BatchItem)
        .outerjoin(Job, Job.id == BatchItem.job_id)
        .where(BatchItem.batch_id == batch_id)
        .group_by(state)
    )
    return {name: count for name, count in rows}


def list_items(
    session: Session,
    batch_id: uuid.UUID,
    *,
    after: int = -1,
    limit: int = 50,
    states: list[str] | None = None,
) -> list[tuple[BatchItem, Job | None]]:
    """A page of items in submission order, after position `after`, with their jobs."""
    query = (
        select(BatchItem, Job)
        .outerjoin(Job, Job.id == BatchItem.job_id)
        .where(BatchItem.batch_id == batch_id, BatchItem.position > after)
        .order_by(BatchItem.position)
        .limit(limit)
    )
    if states:
        query = query.where(_item_state().in_(states))
    return [(item, job) for item, job in session.execute(query)]


@dataclass(frozen=True)
class ItemPage:
    items: list[tuple[BatchItem, Job | None]]
    #: whether items follow these (past the limit, or past the bytes)
    more: bool


def page_of_items(
    session: Session,
    batch_id: uuid.UUID,
    *,
    after: int = -1,
    limit: int = 50,
    states: list[str] | None = None,
    max_bytes: int = 0,
) -> ItemPage:
    """The items `list_items` gives, ending early once their jobs' results come to `max_bytes` (as JSON
    text; 0: no such end): at least one item, and no more after the one that reaches it. Items that
    share a job (identical requests) count its result each time, as the page shows it each time; it is
    measured once."""
    candidates = (
        select(BatchItem.position, BatchItem.job_id)
        .outerjoin(Job, Job.id == BatchItem.job_id)
        .where(BatchItem.batch_id == batch_id, BatchItem.position > after)
        .order_by(BatchItem.position)
        .limit(limit + 1)
    )
    if states:
        candidates = candidates.where(_item_state().in_(states))
    listed = candidates.cte("listed")
    measured = (
        select(Job.id, func.octet_length(cast(Job.result, Text)).label("size"))
        .where(Job.id.in_(select(listed.c.job_id)))
        .cte("measured")
        .prefix_with("MATERIALIZED")  # once a job, however many items share it
    )
    size = func.coalesce(measured.c.size, 0)
    ran = (
        select(
            listed.c.position,
            (func.sum(size).over(order_by=listed.c.position) - size).label("before"),
            func.count().over().label("found"),
        )
        .select_from(listed.outerjoin(measured, measured.c.id == listed.c.job_id))
        .cte("ran")
    )
    query = (
        select(BatchItem, Job, ran.c.found)
        .join(ran, (BatchItem.batch_id == batch_id) & (BatchItem.position == ran.c.position))
        .outerjoin(Job, Job.id == BatchItem.job_id)
        .where(ran.c.before < max_bytes if max_bytes else true())
        .order_by(BatchItem.position)
        .limit(limit)
    )
    rows = session.execute(query).all()
    return ItemPage([(item, job) for item, job, _ in rows], more=bool(rows) and rows[0].found > len(rows))


def unfinished_jobs(session: Session, batch_id: uuid.UUID) -> list[Job]:
    """The batch's jobs not yet finished (queued, running, or already cancelling), locked for update in
    id order (two cancels of one batch take them one after the other)."""
    unfinished = (JobState.QUEUED, JobState.RUNNING, JobState.CANCELLING)
    query = (
        select(Job)
        .where(
            Job.id.in_(select(BatchItem.job_id).where(BatchItem.batch_id == batch_id)),
            Job.state.in_(unfinished),
        )
        .order_by(Job.id)
        .with_for_update()
    )
    return list(session.scalars(query))
