"""A job's history (the `job_events` table): each state transition, recorded by the transition itself in
its own transaction, and each operator action with the key that asked for it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, func, insert, select, text
from sqlalchemy.orm import Session

from core.events import FINAL_EVENTS, STATE_EVENTS, EventName
from store.models import BatchItem, Job, JobEvent

#: built and compiled once (its values are parameters): an INSERT built per event cost three times the CPU
_INSERT_EVENT = insert(cast(Table, JobEvent.__table__))
#: STATE_EVENTS by the states' plain words, as a stream's filter holds them
_STATE_EVENTS: dict[str, tuple[EventName, ...]] = {str(state): names for state, names in STATE_EVENTS.items()}


def record(
    session: Session,
    job_id: uuid.UUID,
    event: EventName,
    *,
    attempt: int | None = None,
    actor_key_id: int | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    values = {
        "job_id": job_id,
        "event": event,
        "attempt": attempt,
        "actor_key_id": actor_key_id,
        "detail": detail,
    }
    session.execute(_INSERT_EVENT, values)


def record_many(
    session: Session, recorded: list[tuple[uuid.UUID, EventName]], *, actor_key_id: int | None = None
) -> None:
    """`record` for many jobs' events at once (one statement, as executemany batches it)."""
    if recorded:
        rows = [
            {"job_id": job_id, "event": event, "attempt": None, "actor_key_id": actor_key_id, "detail": None}
            for job_id, event in recorded
        ]
        session.execute(_INSERT_EVENT, rows)


def history(session: Session, job_id: uuid.UUID, *, progress: bool = False) -> list[JobEvent]:
    """The job's events in order; its `progress` events only when asked (the event streams show them)."""
    query = select(JobEvent).where(JobEvent.job_id == job_id).order_by(JobEvent.id)
    if not progress:
        query = query.where(JobEvent.event != EventName.PROGRESS)
    return list(session.scalars(query))


@dataclass(frozen=True)
class StreamFilter:
    """Which events a stream shows: one job's, or a client's (None: an admin's, everyone's) narrowed by
    kind, state (the state an event moves its job to) and batch."""

    owner_id: int | None = None
    job_id: uuid.UUID | None = None
    kinds: tuple[str, ...] = ()
    states: tuple[str, ...] = ()
    batch_id: uuid.UUID | None = None


def stream_page(
    session: Session, where: StreamFilter, *, after: int, upto: int, limit: int = 500
) -> list[tuple[JobEvent, str]]:
    """The next events (with their job's kind) after id `after`, up to id `upto` (the feed's safe id)."""
    query = (
        select(JobEvent, Job.kind)
        .join(Job, Job.id == JobEvent.job_id)
        .where(JobEvent.id > after, JobEvent.id <= upto)
        .order_by(JobEvent.id)
        .limit(limit)
    )
    if where.job_id is not None:
        query = query.where(JobEvent.job_id == where.job_id)
    if where.owner_id is not None:
        query = query.where(Job.owner_id == where.owner_id)
    if where.kinds:
        query = query.where(Job.kind.in_(where.kinds))
    if where.states:
        names = [name for state in where.states for name in (state, *_STATE_EVENTS.get(state, ()))]
        query = query.where(JobEvent.event.in_(names))
    if where.batch_id is not None:
        query = query.where(
            JobEvent.job_id.in_(select(BatchItem.job_id).where(BatchItem.batch_id == where.batch_id))
        )
    return [(event, kind) for event, kind in session.execute(query)]


def ended_by(session: Session, job_id: uuid.UUID, upto: int) -> bool:
    """Whether the job's final event is among its events up to id `upto`."""
    final = select(JobEvent.id).where(
        JobEvent.job_id == job_id, JobEvent.id <= upto, JobEvent.event.in_(FINAL_EVENTS)
    )
    return session.execute(select(final.exists())).scalar_one()


def since(session: Session, after: int, limit: int = 5000) -> list[tuple[int, int | None, uuid.UUID]]:
    """Ids of the events after `after` that are visible now, with their job's owner and their job, in
    order."""
    rows = session.execute(
        select(JobEvent.id, Job.owner_id, JobEvent.job_id)
        .outerjoin(Job, Job.id == JobEvent.job_id)
        .where(JobEvent.id > after)
        .order_by(JobEvent.id)
        .limit(limit)
    )
    return [(event_id, owner, job_id) for event_id, owner, job_id in rows]


def last_id(session: Session) -> int:
    return session.execute(select(func.coalesce(func.max(JobEvent.id), 0))).scalar_one()


@dataclass(frozen=True)
class Horizon:
    """Every event id up to `last_id` had been handed out, and `writers` (transaction ids) were in progress
    just after: once they have all ended, each id up to `last_id` is visible or never will be."""

    last_id: int
    writers: list[str]


def horizon(session: Session) -> Horizon:
    """The last event id handed out, then the transactions in progress: two statements, in that order, so
    the second's snapshot lists whoever still holds an id up to it (migration 0013 gives an event's
    writer its transaction id before the event takes its id)."""
    last = session.scalar(
        text("SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM job_events_id_seq")
    )
    writers = session.scalars(text("SELECT pg_snapshot_xip(pg_current_snapshot())::text"))
    return Horizon(int(last or 0), list(writers))


def ended(session: Session, writers: list[str]) -> bool:
    """Whether every one of these transactions has committed or rolled back."""
    if not writers:
        return True
    return bool(
        session.scalar(
            text(
                "SELECT bool_and(coalesce(pg_xact_status(x::xid8) <> 'in progress', true)) "
                "FROM unnest(CAST(:writers AS text[])) AS x"
            ),
            {"writers": writers},
        )
    )
