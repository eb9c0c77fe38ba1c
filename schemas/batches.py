"""Batch requests and resources (`POST /batches`, `GET /batches/{id}`)."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from core.states import JOB_STATES
from schemas.fields import Float, QueryInteger, check_storable
from schemas.jobs import KIND_NAME, JobError, callback_url_field, priority_field, queue_timeout_field

MAX_BATCH_ITEMS = 500
ITEM_STATES = (*JOB_STATES, "rejected")


class BatchItemCreate(Schema):
    client_id = fields.String(
        required=True,
        validate=[validate.Length(1, 100), check_storable],
        metadata={"description": "your id for this request"},
    )
    params = fields.Dict(
        keys=fields.String(), load_default=dict, metadata={"description": "the kind's params"}
    )


class BatchCreate(Schema):
    kind = fields.String(
        load_default="leaving_earth.plan", validate=[validate.Length(max=64), validate.Regexp(KIND_NAME)]
    )
    items = fields.List(
        fields.Nested(BatchItemCreate),
        required=True,
        validate=validate.Length(1, MAX_BATCH_ITEMS),
        metadata={"description": f"1 to {MAX_BATCH_ITEMS} requests; identical params are solved once"},
    )
    time_limit = Float(
        load_default=None,
        validate=validate.Range(min=0.1),
        metadata={"description": "solve time limit per item, in seconds"},
    )
    priority = priority_field("the batch's jobs")
    queue_timeout = queue_timeout_field("each of the batch's jobs")
    callback_url = callback_url_field("the batch's status once every item has finished")

    @validates_schema
    def _distinct_client_ids(self, data: dict[str, Any], **kwargs: object) -> None:
        seen: set[str] = set()
        for item in data["items"]:
            if item["client_id"] in seen:
                raise ValidationError(f"client_id {item['client_id']!r} appears twice", "items")
            seen.add(item["client_id"])


class BatchItem(Schema):
    client_id = fields.String()
    position = fields.Integer()
    state = fields.String(validate=validate.OneOf(ITEM_STATES))
    job_id = fields.UUID(allow_none=True, metadata={"description": "shared by identical requests"})
    result = fields.Dict(allow_none=True)
    error = fields.Nested(JobError, allow_none=True)
    errors = fields.Dict(
        allow_none=True, metadata={"description": "why a rejected item's params are invalid"}
    )


class Batch(Schema):
    id = fields.UUID()
    kind = fields.String()
    created_at = fields.DateTime()
    item_count = fields.Integer()
    job_count = fields.Integer(metadata={"description": "distinct requests actually solved"})
    counts = fields.Dict(
        keys=fields.String(), values=fields.Integer(), metadata={"description": "items by state"}
    )
    done = fields.Boolean(
        metadata={"description": "every item is final (succeeded, failed, cancelled, rejected)"}
    )
    items = fields.List(fields.Nested(BatchItem))
    next_cursor = fields.String(
        allow_none=True, metadata={"description": "pass as ?cursor= for the next page"}
    )
    links = fields.Dict(keys=fields.String(), values=fields.String())


class BatchGetArgs(Schema):
    limit = QueryInteger(load_default=50, validate=validate.Range(1, MAX_BATCH_ITEMS))
    cursor = fields.String(
        validate=validate.Regexp(r"^[0-9]{1,9}$", error="not a cursor from this service"),
        metadata={"description": "next_cursor of the previous page"},
    )
    state = fields.List(
        fields.String(validate=validate.OneOf(ITEM_STATES)), metadata={"description": "filter"}
    )
