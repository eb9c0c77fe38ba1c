"""Webhook deliveries (rows made by the finish trigger of migrations 0010 and 0012 when a job, each run of
it, or a batch with a callback URL finishes) and every attempt at them, and the per-key secret that signs
them."""

from __future__ import annotations

import secrets
import uuid
from base64 import b64encode
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session

from core.states import DeliveryState
from store.models import ApiKey, WebhookAttempt, WebhookDelivery

SECRET_PREFIX = "whsec_"


def _later(seconds: float) -> Any:
    return func.now() + timedelta(seconds=seconds)


def secret(session: Session, key_id: int, *, rotate: bool = False) -> str:
    """The key's signing secret (`whsec_` + base64 of 32 random bytes), made on first use; `rotate` makes
    a new one (deliveries from then on are signed with it)."""
    key = session.get_one(ApiKey, key_id, with_for_update=True)
    if key.webhook_secret is None or rotate:
        key.webhook_secret = SECRET_PREFIX + b64encode(secrets.token_bytes(32)).decode()
        session.flush()
    return key.webhook_secret


def claim_unsent(session: Session, limit: int = 200) -> list[int]:
    """Deliveries not yet published, marked as published now (the caller publishes them after commit)."""
    unsent = (
        select(WebhookDelivery.id)
        .where(WebhookDelivery.state == DeliveryState.PENDING, WebhookDelivery.enqueued_at.is_(None))
        .order_by(WebhookDelivery.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    return list(
        session.scalars(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(unsent))
            .values(enqueued_at=func.now())
            .returning(WebhookDelivery.id)
        )
    )


def mark_unsent(session: Session, ids: list[int]) -> None:
    if ids:
        session.execute(update(WebhookDelivery).where(WebhookDelivery.id.in_(ids)).values(enqueued_at=None))


def forget_lost(session: Session, overdue: float) -> None:
    """Pending deliveries whose next attempt is `overdue` seconds late (their message was lost, or their
    worker died): marked unsent, so that they are published again."""
    session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.state == DeliveryState.PENDING,
            WebhookDelivery.enqueued_at.isnot(None),
            WebhookDelivery.next_attempt_at < _later(-overdue),
            or_(WebhookDelivery.lease_expires_at.is_(None), WebhookDelivery.lease_expires_at < func.now()),
        )
        .values(enqueued_at=None)
    )


def claim(session: Session, delivery_id: int, lease_seconds: float) -> WebhookDelivery | None:
    """Take a pending delivery whose attempt is due (and that no other task holds) and count the attempt.
    None: delivered, given up, held by another task, or not due (a duplicate message)."""
    return session.scalar(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.id == delivery_id,
            WebhookDelivery.state == DeliveryState.PENDING,
            WebhookDelivery.next_attempt_at <= _later(1.0),
            or_(WebhookDelivery.lease_expires_at.is_(None), WebhookDelivery.lease_expires_at < func.now()),
        )
        .values(attempts=WebhookDelivery.attempts + 1, lease_expires_at=_later(lease_seconds))
        .returning(WebhookDelivery)
    )


@dataclass(frozen=True)
class Attempt:
    status_code: int | None
    latency_ms: float | None
    #: why it did not deliver, in the service's own words (never the receiver's bytes); None: delivered
    reason: str | None


def record_attempt(
    session: Session, delivery: WebhookDelivery, attempt: Attempt, *, retry_in: float | None
) -> DeliveryState:
    """Store an attempt and what follows: delivered (a 2xx), another try in `retry_in` seconds, or
    failed (no retry left, or `retry_in` None)."""
    session.add(
        WebhookAttempt(
            delivery_id=delivery.id,
            attempt=delivery.attempts,
            status_code=attempt.status_code,
            latency_ms=attempt.latency_ms,
            reason=attempt.reason,
        )
    )
    delivered = attempt.status_code is not None and 200 <= attempt.status_code < 300
    if delivered:
        state = DeliveryState.DELIVERED
    else:
        state = DeliveryState.PENDING if retry_in is not None else DeliveryState.FAILED
    values: dict[str, Any] = {"state": state, "lease_expires_at": None}
    if state == DeliveryState.PENDING:
        values["next_attempt_at"] = _later(retry_in or 0)
    else:
        values["finished_at"] = func.now()
    session.execute(update(WebhookDelivery).where(WebhookDelivery.id == delivery.id).values(**values))
    return state


def for_job(session: Session, job_id: uuid.UUID) -> list[tuple[WebhookDelivery, list[WebhookAttempt]]]:
    """The job's delivery (and, where the job belongs to a batch with a callback, the batch's), each
    with its attempts in order."""
    from store.models import BatchItem

    batches = select(BatchItem.batch_id).where(BatchItem.job_id == job_id)
    deliveries = list(
        session.scalars(
            select(WebhookDelivery)
            .where(or_(WebhookDelivery.job_id == job_id, WebhookDelivery.batch_id.in_(batches)))
            .order_by(WebhookDelivery.id)
        )
    )
    attempts = list(
        session.scalars(
            select(WebhookAttempt)
            .where(WebhookAttempt.delivery_id.in_([delivery.id for delivery in deliveries]))
            .order_by(WebhookAttempt.delivery_id, WebhookAttempt.attempt)
        )
    )
    return [(delivery, [a for a in attempts if a.delivery_id == delivery.id]) for delivery in deliveries]


def add_batch_delivery(session: Session, batch_id: uuid.UUID, owner_id: int, url: str) -> None:
    """A batch that is done as soon as it is made (every item rejected): its delivery now."""
    exists = select(WebhookDelivery.id).where(WebhookDelivery.batch_id == batch_id).exists()
    if not session.scalar(select(exists)):
        session.add(WebhookDelivery(owner_id=owner_id, batch_id=batch_id, url=url))
        session.flush()
