"""A job's webhook deliveries as the API and the dashboard show them: each (and its batch's) with every
attempt, as plain dicts of the delivery's fields."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from core.states import DeliveryState
from store import webhooks as webhook_store
from store.models import WebhookAttempt


def _attempt_view(attempt: WebhookAttempt) -> dict[str, Any]:
    return {
        "attempt": attempt.attempt,
        "at": attempt.at,
        "status_code": attempt.status_code,
        "latency_ms": attempt.latency_ms,
        "reason": attempt.reason,
    }


def delivery_views(session: Session, job_id: uuid.UUID) -> list[dict[str, Any]]:
    """The job's deliveries (and its batch's), each with every attempt."""
    return [
        {
            "id": delivery.id,
            "webhook_id": f"msg_{delivery.id}",
            "target": "job" if delivery.job_id is not None else "batch",
            "url": delivery.url,
            "state": delivery.state,
            "attempts": [_attempt_view(attempt) for attempt in attempts],
            "created_at": delivery.created_at,
            "finished_at": delivery.finished_at,
            "next_attempt_at": delivery.next_attempt_at if delivery.state == DeliveryState.PENDING else None,
        }
        for delivery, attempts in webhook_store.for_job(session, job_id)
    ]
