"""A job's history (the `job_events` table): each state transition, recorded by the transition itself in
its own transaction, and each operator action with the key that asked for it."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from store.models import JobEvent

#: an error's message is kept in full on the job; its event keeps the start
MESSAGE_CHARS = 500


def record(
    session: Session,
    job_id: uuid.UUID,
    event: str,
    *,
    attempt: int | None = None,
    actor_key_id: int | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    session.execute(
        insert(JobEvent).values(
            job_id=job_id, event=event, attempt=attempt, actor_key_id=actor_key_id, detail=detail
        )
    )


def error_detail(error: dict[str, Any] | None) -> dict[str, Any] | None:
    """An error without its traceback, for an event's detail."""
    if not error:
        return None
    return {"type": error.get("type"), "message": str(error.get("message", ""))[:MESSAGE_CHARS]}


def history(session: Session, job_id: uuid.UUID) -> list[JobEvent]:
    return list(session.scalars(select(JobEvent).where(JobEvent.job_id == job_id).order_by(JobEvent.id)))
