"""Query arguments that filter by kind take the registered kinds only: the spec lists them (an enum), and
an unknown one is a 422 that names them, instead of an empty page or a stream that never speaks."""

from __future__ import annotations

from marshmallow import fields, validate

from kinds import KINDS
from schemas import events as event_schemas
from schemas import jobs as job_schemas


def known_kind() -> validate.OneOf:
    names = sorted(KINDS)
    return validate.OneOf(names, error=f"unknown kind; one of: {', '.join(names)}")


class JobListQuery(job_schemas.JobListArgs):
    kind = fields.List(
        fields.String(validate=known_kind()),
        load_default=list,
        metadata={"description": "filter by kind (repeatable: any of them)"},
    )


class EventStreamQuery(event_schemas.EventStreamArgs):
    kind = fields.List(
        fields.String(validate=known_kind()),
        load_default=list,
        metadata={"description": "only jobs of these kinds"},
    )
