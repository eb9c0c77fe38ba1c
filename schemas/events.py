"""Event streams (their query), webhook deliveries and the key's webhook secret."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from core.states import JOB_STATES, DeliveryState
from schemas.fields import QueryInteger
from schemas.jobs import KIND_NAME

#: event ids are PostgreSQL bigints
MAX_EVENT_ID = 2**63 - 1


class StreamResumeArgs(Schema):
    """Where a stream resumes: after this event id (the `Last-Event-ID` header, when sent, wins)."""

    last_event_id = QueryInteger(
        load_default=None,
        validate=validate.Range(0, MAX_EVENT_ID),
        metadata={"description": "resume after this event id, as Last-Event-ID does (0: from the start)"},
    )


class EventStreamArgs(StreamResumeArgs):
    """Filters of `GET /events`: every one given must hold (repeat `kind` or `state` for several)."""

    kind = fields.List(
        fields.String(validate=[validate.Length(max=64), validate.Regexp(KIND_NAME)]),
        load_default=list,
        metadata={"description": "only jobs of these kinds"},
    )
    state = fields.List(
        fields.String(validate=validate.OneOf(JOB_STATES)),
        load_default=list,
        metadata={
            "description": "only events that move a job to these states (queued: created, requeued, "
            "retried; cancelling: cancel_requested)"
        },
    )
    batch = fields.UUID(load_default=None, metadata={"description": "only the jobs of this batch"})


class DeliveryAttempt(Schema):
    attempt = fields.Integer()
    at = fields.DateTime()
    status_code = fields.Integer(allow_none=True, metadata={"description": "None: no answer"})
    latency_ms = fields.Float(allow_none=True)
    reason = fields.String(
        allow_none=True,
        metadata={
            "description": "why it did not deliver, in the service's words: timeout, connection refused, "
            "connection failed, TLS error, invalid response, address not allowed, host does not resolve, "
            "HTTP <status>; never what the receiver sent. None: delivered"
        },
    )


class Delivery(Schema):
    id = fields.Integer()
    webhook_id = fields.String(metadata={"description": "the webhook-id header of every attempt"})
    target = fields.String(validate=validate.OneOf(("job", "batch")))
    url = fields.String()
    state = fields.String(validate=validate.OneOf(tuple(DeliveryState)))
    attempts = fields.List(fields.Nested(DeliveryAttempt))
    created_at = fields.DateTime()
    finished_at = fields.DateTime(allow_none=True)
    next_attempt_at = fields.DateTime(allow_none=True)


class DeliveryList(Schema):
    items = fields.List(fields.Nested(Delivery))


class WebhookSecret(Schema):
    secret = fields.String(
        metadata={"description": "whsec_<base64>: HMAC-SHA256 key (the decoded part) of webhook-signature"}
    )
