"""Jobs: submit (validated, cached or idempotent), cancel, and the operator's retry and shard requeue."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any, TypedDict

from marshmallow import ValidationError
from sqlalchemy.orm import Session

from core import tracing
from core.states import FINAL_STATES
from kinds import KINDS, Kind
from schemas.jobs import JobCreate
from services.context import Caller, Context
from services.errors import Conflict, Invalid, NotFound, TooMany
from services.messages import (
    Messages,
    publish,
    publish_deliveries,
    publish_released,
    release_within,
    send,
)
from services.reads import jobs as job_reads
from services.reads.jobs import JobView, job_view
from services.webhooks import checked_callback_url
from store import dashboard
from store import jobs as job_store

IDEMPOTENCY_KEY_MAX = 255
log = logging.getLogger("zolve.services")


class _NewJob(TypedDict):
    owner_id: int
    kind: str
    params: dict[str, Any]
    time_limit: float


@dataclass(frozen=True)
class Submission:
    job: JobView
    #: False: an earlier request with the same Idempotency-Key made this job
    created: bool = True
    #: served from an identical succeeded job of the same client instead of solved again (a copy of
    #: another client's job is not told apart from fresh work)
    cache_hit: bool = False


def kind_named(name: str) -> Kind:
    kind = KINDS.get(name)
    if kind is None:
        raise Invalid({"kind": [f"unknown kind; one of: {', '.join(sorted(KINDS))}"]})
    return kind


def validated_params(kind: Kind, raw: Any) -> dict[str, Any]:
    try:
        return kind.load_params(raw)
    except ValidationError as err:
        raise Invalid({"params": err.messages}) from None


def checked_time_limit(ctx: Context, requested: float | None, kind: Kind | None = None) -> float:
    """The job's solve time (a sharded job's: all its shards' together): as asked, at most the maximum;
    by default the kind's own default or the service's."""
    if requested is None:
        default = (
            kind.default_time_limit if kind and kind.default_time_limit else ctx.settings.default_time_limit
        )
        return min(default, ctx.settings.max_time_limit)
    if requested > ctx.settings.max_time_limit:
        raise Invalid({"time_limit": [f"must be at most {ctx.settings.max_time_limit:g} seconds"]})
    return requested


def checked_idempotency_key(key: str | None) -> str | None:
    if key is not None and not (0 < len(key) <= IDEMPOTENCY_KEY_MAX):
        raise Invalid({"Idempotency-Key": [f"must be 1 to {IDEMPOTENCY_KEY_MAX} characters"]})
    return key


def submit(
    ctx: Context,
    caller: Caller,
    kind_name: str,
    raw_params: Any,
    *,
    loaded_params: dict[str, Any] | None = None,
    time_limit: float | None = None,
    fresh: bool = False,
    priority: int = 0,
    queue_timeout: float | None = None,
    idempotency_key: str | None = None,
    callback_url: str | None = None,
) -> Submission:
    """Validate and store a job, then wake a worker (or leave it to the sweeper if the broker is down).
    `loaded_params`: `raw_params` as the kind already loaded them (not loaded again)."""
    kind = kind_named(kind_name)
    params = loaded_params if loaded_params is not None else validated_params(kind, raw_params)
    limit = checked_time_limit(ctx, time_limit, kind)
    key = checked_idempotency_key(idempotency_key)
    callback = checked_callback_url(ctx.settings, callback_url)
    owner: _NewJob = {"owner_id": caller.key_id, "kind": kind.name, "params": params, "time_limit": limit}
    cached, released = None, None
    with ctx.db.session() as session:
        # a repeat is answered whatever the quota, as a batch's is: its job is already among those counted
        repeat = key is not None and job_store.idempotency_key_used(session, caller.key_id, key, batch=False)
        locked = False if repeat else check_unfinished_quota(ctx, session, caller, 1)
        if kind.cacheable and not fresh and not repeat:
            cached = job_store.create_cached_job(
                session,
                **owner,
                callback_url=callback,
                idempotency_key=key,
                priority=priority,
                queue_timeout=queue_timeout,
            )
        if cached is None:
            try:
                job, created = job_store.create_job(
                    session,
                    **owner,
                    priority=priority,
                    queue_timeout=queue_timeout,
                    idempotency_key=key,
                    callback_url=callback,
                    trace_parent=tracing.current_traceparent(),
                )
            except job_store.IdempotencyConflict as conflict:
                raise Invalid({"Idempotency-Key": [str(conflict)]}, str(conflict)) from None
            if created:  # it goes now, or when the caller's turn comes (a submit changes no shard's turn)
                released = release_within(ctx, session, {caller.key_id}, shards=False, locked=locked)
    if cached is not None:
        if callback:
            publish_deliveries(ctx.broker, ctx.db)  # finished at once: its webhook goes now
        return Submission(job_view(cached.job), cache_hit=cached.own)
    if released is not None:
        publish_released(ctx, released)  # a message the broker refuses is marked unsent, for the sweeper
    return Submission(job_view(job), created=created)


def submit_request(ctx: Context, caller: Caller, raw: Any, idempotency_key: str | None = None) -> Submission:
    """`submit` from a request body as `POST /jobs` takes it ({kind, params, time_limit?, fresh?}), read
    with the same schema: the dashboard's forms send what the API would."""
    try:
        body = JobCreate().load(raw)
    except ValidationError as err:
        raise Invalid(err.messages_dict) from None
    return submit(
        ctx,
        caller,
        body["kind"],
        body["params"],
        time_limit=body["time_limit"],
        fresh=body["fresh"],
        priority=body["priority"],
        queue_timeout=body["queue_timeout"],
        idempotency_key=idempotency_key,
    )


def check_unfinished_quota(ctx: Context, session: Session, caller: Caller, adding: int) -> bool:
    """A key may have at most ZOLVE_MAX_UNFINISHED_PER_KEY jobs not yet finished. Call it in the
    transaction that inserts the jobs: it holds the key's lock until that transaction ends, so concurrent
    submits of one key are counted one after the other. True when it took the lock (there is a quota)."""
    limit = ctx.settings.max_unfinished_per_key
    if not limit:
        return False
    if adding > limit:  # no wait makes room for it
        raise Invalid(
            {"items": [f"makes {adding} jobs; this key may have at most {limit} unfinished: split it"]},
            f"too many jobs at once for this key's quota ({adding}, at most {limit} unfinished)",
        )
    job_store.lock_owner(session, caller.key_id)
    if job_store.unfinished_count(session, caller.key_id) + adding > limit:
        raise TooMany(
            f"this key has too many unfinished jobs to add {adding} (at most {limit}): "
            "retry once some have finished"
        )
    return True


def idempotency_key_used(ctx: Context, key_id: int, idempotency_key: str, *, batch: bool) -> bool:
    """Whether the key made a job (or a batch) under this Idempotency-Key: a submit with it is a replay."""
    with ctx.db.session() as session:
        return job_store.idempotency_key_used(session, key_id, idempotency_key, batch=batch)


def get(ctx: Context, caller: Caller, job_id: uuid.UUID) -> JobView:
    job = job_reads.get_job(ctx.db, job_id, caller.owner_filter)
    if job is None:
        raise NotFound("no such job")
    return job


def picture(ctx: Context, caller: Caller, job_id: uuid.UUID) -> str:
    """The job's result drawn as SVG by its kind. NotFound: no such job (or not the caller's), or a kind
    (or a result) with nothing to draw. Conflict: the job has no result (yet, or ever: failed, cancelled),
    as an export of a job that has not succeeded."""
    job = get(ctx, caller, job_id)
    kind = KINDS.get(job.kind)
    if kind is None:
        raise NotFound(f"jobs of kind {job.kind} have no picture")
    if job.result is None:
        still = "" if job.state in FINAL_STATES else " yet"
        raise Conflict(f"the job is {job.state}: it has no result to draw{still}")
    try:
        drawn = kind.draw(job.params, job.result)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        # a stored result of an older shape: no picture rather than a server error
        log.exception("cannot draw job %s (%s)", job.id, job.kind)
        drawn = None
    if drawn is None:
        raise NotFound(f"jobs of kind {job.kind} have no picture of this result")
    return drawn


def cancel(ctx: Context, caller: Caller, job_id: uuid.UUID) -> JobView:
    """A queued job never starts; a running one is interrupted within about a second. A finished job
    (succeeded, failed or cancelled) is a Conflict; cancelling a job already cancelling changes nothing."""
    with ctx.db.session() as session:
        job = job_store.get_job(session, job_id, caller.owner_filter)
        if job is None:
            raise NotFound("no such job")
        if job.is_final:
            raise Conflict(f"the job has already finished ({job.state}): there is nothing to cancel")
        cancelled = job_view(job_store.request_cancel(session, job, actor_key_id=caller.key_id))
    send(ctx, Messages(owners={cancelled.owner_id}))  # a cancelled queued job frees its client's turn now
    return cancelled


def retry(ctx: Context, caller: Caller, job_id: uuid.UUID) -> JobView:
    """Run a failed job again from the start (its shards and rows go). Admins only."""
    _require_admin(caller)
    try:
        with ctx.db.session() as session:
            failed = job_store.get_job(session, job_id, None)
            if failed is not None:  # it counts as its owner's unfinished job again
                check_unfinished_quota(ctx, session, Caller(failed.owner_id, is_admin=False), 1)
            job = job_view(dashboard.retry_job(session, job_id, caller.key_id))
    except dashboard.ActionRefused as refused:
        raise Conflict(str(refused)) from None
    publish(ctx, Messages(jobs=[job_id]))
    return job


def requeue_shard(ctx: Context, caller: Caller, job_id: uuid.UUID, shard_id: int) -> None:
    """Queue a shard again; a worker still running it stops without storing anything. Admins only."""
    _require_admin(caller)
    try:
        with ctx.db.session() as session:
            dashboard.requeue_shard(session, job_id, shard_id, caller.key_id)
    except dashboard.ActionRefused as refused:
        raise Conflict(str(refused)) from None
    publish(ctx, Messages(shards=[shard_id]))


def _require_admin(caller: Caller) -> None:
    if not caller.is_admin:
        raise NotFound("no such job")
