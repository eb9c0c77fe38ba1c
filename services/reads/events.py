"""A job's history as the event streams and the dashboard read it: the next events of a stream (with
their job's kind) up to the feed's safe id, and whether a job's stream has seen its end."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from services.reads.copies import copied
from store import events
from store.db import Database
from store.events import StreamFilter
from store.models import JobEvent

__all__ = ["EventView", "StreamFilter", "StreamPage", "event_view", "next_events"]


@dataclass(frozen=True)
class EventView:
    id: int
    job_id: uuid.UUID
    at: datetime
    event: str
    attempt: int | None
    actor_key_id: int | None
    detail: dict[str, Any] | None


def event_view(event: JobEvent) -> EventView:
    return copied(EventView, event)


class StreamPage(NamedTuple):
    #: each event with its job's kind, in order
    events: list[tuple[EventView, str]]
    #: a job's stream with no event left to show: the job's final event was shown before
    ended: bool


def next_events(db: Database, where: StreamFilter, *, after: int, upto: int) -> StreamPage:
    """The events after id `after` up to id `upto` (the feed's safe id), in one transaction; the
    connection goes back before the caller shows them."""
    with db.session() as session:
        page = events.stream_page(session, where, after=after, upto=upto)
        ended = where.job_id is not None and not page and events.ended_by(session, where.job_id, after)
        return StreamPage([(event_view(event), kind) for event, kind in page], ended)
