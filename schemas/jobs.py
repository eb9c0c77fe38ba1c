"""Job resources: the request to create one, the job as returned, list pages and query args."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from marshmallow import Schema, ValidationError, fields, validate

from core.pages import JOB_CURSOR
from core.states import JOB_STATES
from schemas.fields import Boolean, Float, Integer, QueryFloat, QueryInteger

#: what a kind's name looks like (e.g. planetx.enumerate)
KIND_NAME = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$"


class HttpUrl(validate.URL):
    """validate.URL that also takes an IPv6 literal with an embedded IPv4 address (`http://[::ffff:127.0.0.1]/`),
    a valid URL (RFC 3986) that marshmallow's pattern refuses: "Not a valid URL." misled, since what is
    wrong with it is its address, which the service then names (issue 50, item 6)."""

    def __call__(self, value: str) -> str:
        try:
            return super().__call__(value)
        except ValidationError:
            if not _ip_literal_url(value, self.schemes):
                raise
            return value


def _ip_literal_url(value: str, schemes: set[str]) -> bool:
    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        return False
    if not host or parts.scheme not in schemes or f"[{host}]" not in parts.netloc.lower():
        return False
    try:
        ipaddress.IPv6Address(host)
    except ValueError:
        return False
    return True


def callback_url_field(what: str) -> fields.String:
    """An http(s) URL the final state is POSTed to, signed (its address is checked by the service)."""
    return fields.String(
        load_default=None,
        allow_none=True,
        validate=[validate.Length(max=2000), HttpUrl(schemes={"http", "https"}, require_tld=False)],
        metadata={
            "format": "uri",
            "description": f"POSTed {what}, signed (see GET /webhooks/secret); once. An http(s) URL whose "
            "host resolves to public addresses only (a private, loopback, link-local or multicast one is "
            "refused)",
        },
    )


#: the longest queue_timeout a job may ask for: a week
MAX_QUEUE_TIMEOUT = 7 * 24 * 3600.0
PRIORITY_RANGE = (-100, 100)


def priority_field(what: str) -> fields.Integer:
    return Integer(
        load_default=0,
        validate=validate.Range(*PRIORITY_RANGE),
        metadata={
            "description": f"{PRIORITY_RANGE[0]} to {PRIORITY_RANGE[1]}, default 0: among your waiting work, "
            f"{what} of higher priority start first (ties: oldest first). It orders your own work only: your "
            "share of the workers against other keys' is your key's weight, and a running job is never "
            "interrupted"
        },
    )


def queue_timeout_field(what: str) -> fields.Float:
    return Float(
        load_default=None,
        validate=validate.Range(min=0.1, max=MAX_QUEUE_TIMEOUT),
        metadata={
            "description": f"seconds {what} may wait to start (at most a week); one not started in time "
            "ends `expired` without running, with its event and webhook like any other end (default: "
            "no limit)"
        },
    )


class JobCreate(Schema):
    kind = fields.String(
        required=True,
        validate=[validate.Length(max=64), validate.Regexp(KIND_NAME)],
        metadata={"description": "puzzle kind, see GET /kinds"},
    )
    params = fields.Dict(
        keys=fields.String(), load_default=dict, metadata={"description": "the kind's parameters"}
    )
    time_limit = Float(
        load_default=None,
        validate=validate.Range(min=0.1, min_inclusive=True),
        metadata={
            "description": "solve seconds; a sharded job's shards share them (default: the kind's, else "
            "the service's)"
        },
    )
    fresh = Boolean(
        load_default=False,
        metadata={
            "description": "solve again even if an identical job of yours already succeeded: only kinds "
            "that reuse results look for one (the others always run)"
        },
    )
    priority = priority_field("jobs")
    queue_timeout = queue_timeout_field("the job")
    callback_url = callback_url_field("the job's final status when it finishes")


class JobError(Schema):
    type = fields.String()
    message = fields.String()
    traceback = fields.String(metadata={"description": "admins only"})


class JobLinks(Schema):
    self = fields.String()
    cancel = fields.String()
    rows = fields.String(
        metadata={"description": "paged rows (e.g. Planet X boards), for kinds that store them"}
    )
    ndjson = fields.String()
    csv = fields.String()
    result_items = fields.String(
        metadata={"description": "the items of a result too large to return whole (see result.paged)"}
    )
    events = fields.String(metadata={"description": "the job's events as a stream (text/event-stream)"})
    deliveries = fields.String(metadata={"description": "its webhook deliveries and their attempts"})


class Job(Schema):
    id = fields.UUID()
    kind = fields.String()
    state = fields.String(validate=validate.OneOf(JOB_STATES))
    params = fields.Dict()
    time_limit = fields.Float()
    priority = fields.Integer()
    queue_timeout = fields.Float(allow_none=True)
    progress = fields.Dict(allow_none=True)
    result = fields.Dict(allow_none=True)
    error = fields.Nested(JobError, allow_none=True)
    attempts = fields.Integer()
    cancel_requested = fields.Boolean()
    created_at = fields.DateTime()
    started_at = fields.DateTime(allow_none=True)
    finished_at = fields.DateTime(allow_none=True)
    queued_seconds = fields.Float(
        allow_none=True, metadata={"description": "created → first started (or ended, if it never started)"}
    )
    run_seconds = fields.Float(allow_none=True, metadata={"description": "started → finished (or now)"})
    callback_url = fields.String(allow_none=True)
    trace_id = fields.String(
        metadata={"description": "admins only, while tracing is on: the OpenTelemetry trace of the job"}
    )
    links = fields.Nested(JobLinks)


class JobPage(Schema):
    items = fields.List(fields.Nested(Job))
    next_cursor = fields.String(
        allow_none=True, metadata={"description": "pass as ?cursor= for the next page"}
    )


class JobListArgs(Schema):
    state = fields.List(
        fields.String(validate=validate.OneOf(JOB_STATES)),
        load_default=list,
        metadata={"description": "filter by state (repeatable: any of them)"},
    )
    kind = fields.List(
        fields.String(validate=validate.Regexp(KIND_NAME)),
        load_default=list,
        metadata={"description": "filter by kind (repeatable: any of them)"},
    )
    limit = QueryInteger(load_default=20, validate=validate.Range(1, 100))
    cursor = fields.String(
        validate=validate.Regexp(JOB_CURSOR, error="not a cursor from this service"),
        metadata={"description": "next_cursor of the previous page: the page after that place in the list"},
    )


class JobGetArgs(Schema):
    wait = QueryFloat(
        load_default=0,
        validate=validate.Range(min=0),
        metadata={"description": "long-poll: block up to this many seconds (capped) until the job finishes"},
    )


class Error(Schema):
    code = fields.Integer(required=True, metadata={"description": "HTTP status"})
    status = fields.String(metadata={"description": "HTTP reason phrase"})
    message = fields.String(required=True)
    errors = fields.Dict(metadata={"description": "field-level messages, keyed like the request"})


class ResultItemsArgs(Schema):
    limit = QueryInteger(load_default=100, validate=validate.Range(1, 1000))
    cursor = QueryInteger(
        validate=validate.Range(0, 2**31 - 1), metadata={"description": "next_cursor of the previous page"}
    )


class ResultItemsPage(Schema):
    items = fields.List(fields.Raw(), metadata={"description": "the result's items, in order"})
    next_cursor = fields.Integer(allow_none=True)
