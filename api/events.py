"""Clients that are told: a job's events and a client's as server-sent events, a job's webhook
deliveries, and the key's webhook secret. The streams read PostgreSQL's job history, woken by the
process's LISTEN connection (store.listen). Between its events a stream holds neither a thread nor a
database connection under the API's edge (core.waiting), only a coroutine: at most `max_streams` per
process and `max_streams_per_key` per key (beyond: 429)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any, cast

from flask import Response, request, stream_with_context
from flask_smorest import abort
from marshmallow import RAISE
from zolve_client.wire import Progress

from api.auth import auth
from api.bodies import Blueprint
from api.deps import caller, context, database, settings
from api.extension import zolve
from api.kind_filters import EventStreamQuery
from core.events import FINAL_EVENTS, EventName
from core.waiting import Pause, pause
from kinds import KINDS
from schemas import events as event_schemas
from services import jobs as job_service
from services import webhooks
from services.reads import events as event_reads
from services.reads.events import EventView, StreamFilter

blp = Blueprint("events", __name__, description="Event streams and webhooks")

STREAM_DOC = (
    "text/event-stream: one event per job event, `id:` its event id (send it back as `Last-Event-ID` "
    "to resume without missing or repeating one), `event:` its name ("
    + ", ".join(EventName)
    + "), `data:` JSON "
    "{id, job_id, kind, event, at, attempt, detail}; `progress` events carry shards done/total, the rows "
    "(e.g. boards) so far and per second, or a kind's own progress (e.g. the best found so far)"
)


def _resumed_after(last_event_id: int | None) -> int | None:
    """The event id a stream resumes after: the Last-Event-ID header, else `?last_event_id=`; None: not
    resumed."""
    header = request.headers.get("Last-Event-ID")
    if not header:
        return last_event_id
    if not (header.isascii() and header.isdigit() and len(header) <= 18):
        abort(422, errors={"Last-Event-ID": ["must be an event id from this stream"]})
    return int(header)


def _data(event: EventView, kind: str) -> dict[str, Any]:
    detail = event.detail
    if event.event == EventName.PROGRESS and detail:  # a sharded job's counters name its rows
        spec = KINDS.get(kind)
        detail = Progress.from_json(detail).to_json(spec.counted_rows if spec else "rows")
    return {
        "id": event.id,
        "job_id": str(event.job_id),
        "kind": kind,
        "event": event.event,
        "at": event.at.isoformat(),
        "attempt": event.attempt,
        "detail": detail,
    }


def _frame(event: EventView, kind: str) -> str:
    return f"id: {event.id}\nevent: {event.event}\ndata: {json.dumps(_data(event, kind))}\n\n"


def _stream(where: StreamFilter, after: int, key_id: int) -> Response:
    """The stream's response: events after `after`, read up to the feed's safe id whenever it wakes; a
    job's stream ends after its final event."""
    places = zolve().streams
    if not places.take(key_id):
        busy = f"at most {places.per_key} event streams of one key at a time on this API process"
        abort(429, message=f"{busy} (fewer when busy)")
    db, feed, config, environ = database(), zolve().events, settings(), request.environ

    def generate() -> Iterator[str | Pause]:
        subscription = feed.subscribe(where.owner_id)
        deadline = time.monotonic() + config.stream_max_seconds
        last = after
        try:
            yield "retry: 1000\n\n"
            while True:
                page, ended = event_reads.next_events(db, where, after=last, upto=feed.safe_id)
                for event, kind in page:
                    yield _frame(event, kind)
                    last = event.id
                    if where.job_id is not None and event.event in FINAL_EVENTS:
                        return
                if ended or time.monotonic() > deadline:
                    return
                if page:
                    continue
                # between events the stream holds no thread under the edge, nor a database connection
                if not (yield from pause(environ, subscription.woken, config.stream_keepalive_seconds)):
                    yield ": keepalive\n\n"
        finally:
            feed.unsubscribe(subscription)

    # werkzeug passes the Pause items through untouched, to the edge that takes them (core.waiting)
    body = cast(Iterator[str], generate())
    response = Response(stream_with_context(body), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # a proxy in front must not hold the events back
    response.call_on_close(lambda: places.give_back(key_id))
    return response


@blp.route("/jobs/<uuid:job_id>/events", endpoint="job_events")
@auth.login_required
@blp.arguments(event_schemas.StreamResumeArgs, location="query", unknown=RAISE)
@blp.response(200, description=STREAM_DOC, content_type="text/event-stream")
@blp.alt_response(404, description="No such job, or not yours")
@blp.alt_response(429, description="This key (or this server) holds as many streams as it may")
def job_events(args: dict[str, Any], job_id: uuid.UUID) -> Response:
    """A job's events as they happen (from the start, or after `Last-Event-ID`); ends after its final
    state."""
    who = caller()
    job_service.get(context(), who, job_id)  # 404 unless the caller may see it
    after = _resumed_after(args["last_event_id"])
    return _stream(StreamFilter(job_id=job_id), 0 if after is None else after, who.key_id)


@blp.route("/events", endpoint="client_events")
@auth.login_required
@blp.arguments(EventStreamQuery, location="query", unknown=RAISE)
@blp.response(200, description=STREAM_DOC, content_type="text/event-stream")
@blp.alt_response(429, description="This key (or this server) holds as many streams as it may")
def client_events(args: dict[str, Any]) -> Response:
    """Your jobs' events (admins: everyone's) as they happen, after `Last-Event-ID` (or `?last_event_id=`;
    0: from the start; without either: only what happens from now on), narrowed by kind, state and
    batch. Ends after a while (reconnect with `Last-Event-ID`)."""
    who = caller()
    where = StreamFilter(
        owner_id=who.owner_filter,
        kinds=tuple(args["kind"]),
        states=tuple(args["state"]),
        batch_id=args["batch"],
    )
    after = _resumed_after(args["last_event_id"])
    return _stream(where, _feed_start() if after is None else after, who.key_id)


def _feed_start() -> int:
    return zolve().events.position()


@blp.route("/jobs/<uuid:job_id>/deliveries", endpoint="job_deliveries")
@auth.login_required
@blp.response(200, event_schemas.DeliveryList)
@blp.alt_response(404, description="No such job, or not yours")
def job_deliveries(job_id: uuid.UUID) -> Any:
    """The job's webhook deliveries (and its batch's), each with every attempt: status, latency and a
    reason of the service's own (never the receiver's bytes)."""
    return {"items": webhooks.deliveries(context(), caller(), job_id)}


@blp.route("/webhooks/secret", endpoint="webhook_secret", methods=["GET"])
@auth.login_required
@blp.response(200, event_schemas.WebhookSecret)
def webhook_secret() -> Any:
    """The secret this key's webhook deliveries are signed with (made on first use)."""
    return {"secret": webhooks.secret(context(), caller())}


@blp.route("/webhooks/secret/rotate", endpoint="rotate_webhook_secret", methods=["POST"])
@auth.login_required
@blp.response(200, event_schemas.WebhookSecret)
def rotate_webhook_secret() -> Any:
    """A new secret for this key's webhook deliveries, from now on (the old one no longer signs)."""
    return {"secret": webhooks.secret(context(), caller(), rotate=True)}
