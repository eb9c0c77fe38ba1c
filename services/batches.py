"""Batches: many requests of one kind in one call. Each item is validated on its own (a bad one is kept
as rejected, the rest run) and identical requests are solved once."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from core import tracing
from services.context import Caller, Context
from services.errors import Invalid, NotFound
from services.jobs import (
    check_unfinished_quota,
    checked_idempotency_key,
    checked_time_limit,
    kind_named,
    validated_params,
)
from services.messages import Messages, publish_deliveries, send
from services.reads.batches import BatchPage, ItemQuery, batch_view, page_in
from services.webhooks import checked_callback_url
from store import batches as batch_store
from store import jobs
from store import webhooks as webhook_store
from store.jobs import IdempotencyConflict
from store.models import Batch

T = TypeVar("T")


def _items(kind_name: str, raw_items: list[dict[str, Any]]) -> list[batch_store.NewItem]:
    kind = kind_named(kind_name)
    items = []
    for raw in raw_items:
        try:
            items.append(batch_store.NewItem(raw["client_id"], validated_params(kind, raw["params"])))
        except Invalid as refused:
            items.append(batch_store.NewItem(raw["client_id"], None, refused.errors))
    return items


@dataclass(frozen=True)
class Submitted(Generic[T]):
    """What `present` made of the batch; `created` is False when an earlier request with the same
    Idempotency-Key made it."""

    presented: T
    created: bool


def submit_batch(
    ctx: Context,
    caller: Caller,
    kind_name: str,
    raw_items: list[dict[str, Any]],
    time_limit: float | None,
    present: Callable[[BatchPage], T],
    shown: ItemQuery,
    callback_url: str | None = None,
    idempotency_key: str | None = None,
    priority: int = 0,
    queue_timeout: float | None = None,
) -> Submitted[T]:
    """Store the batch and its distinct jobs, then wake the workers. Returns what `present` makes of the
    batch and the items `shown`, read in the same transaction, before any worker could change it. The
    same Idempotency-Key with the same request answers the batch made the first time (nothing new is
    stored or sent); with another request, Invalid."""
    key = checked_idempotency_key(idempotency_key)
    items = _items(kind_name, raw_items)
    limit = checked_time_limit(ctx, time_limit, kind_named(kind_name))
    callback = checked_callback_url(ctx.settings, callback_url)
    order = {"priority": priority, "queue_timeout": queue_timeout}
    digest = _request_hash(kind_name, raw_items, limit, callback, order) if key is not None else None
    with ctx.db.session() as session, _conflict_is_invalid():

        def answer(made: Batch) -> T:
            return present(page_in(session, batch_view(made), shown))

        # a repeat is answered before the quota is counted: its jobs are already among them
        earlier = batch_store.replayed_batch(session, caller.key_id, key, digest) if key and digest else None
        if earlier is not None:
            return Submitted(answer(earlier), created=False)
        distinct = len(
            {jobs.params_hash(kind_name, item.params) for item in items if item.params is not None}
        )
        check_unfinished_quota(ctx, session, caller, distinct)
        batch, job_ids, created = batch_store.create_batch(
            session,
            owner_id=caller.key_id,
            kind=kind_name,
            items=items,
            time_limit=limit,
            priority=priority,
            queue_timeout=queue_timeout,
            trace_parent=tracing.current_traceparent(),
            callback_url=callback,
            idempotency_key=key,
            request_hash=digest,
        )
        if not created:  # a concurrent request with the same key made it first
            return Submitted(answer(batch), created=False)
        if callback and not job_ids:  # every item rejected: done at once
            webhook_store.add_batch_delivery(session, batch.id, caller.key_id, callback)
        presented = answer(batch)
    if job_ids:
        send(ctx, Messages(owners={caller.key_id}))
    elif callback:
        publish_deliveries(ctx.broker, ctx.db)
    return Submitted(presented, created=True)


def _request_hash(
    kind: str, raw_items: list[dict[str, Any]], limit: float, callback: str | None, order: dict[str, Any]
) -> str:
    """What a repeat with the same Idempotency-Key must match: the request as the service read it."""
    request = {"kind": kind, "items": raw_items, "time_limit": limit, "callback_url": callback, **order}
    return hashlib.sha256(json.dumps(request, sort_keys=True, default=str).encode()).hexdigest()


@contextmanager
def _conflict_is_invalid() -> Iterator[None]:
    """A key reused with another request is the client's error, on its Idempotency-Key header."""
    try:
        yield
    except IdempotencyConflict as conflict:
        raise Invalid({"Idempotency-Key": [str(conflict)]}, str(conflict)) from None


def cancel_batch(ctx: Context, caller: Caller, batch_id: uuid.UUID) -> list[uuid.UUID]:
    """Cancel every job of the batch not yet finished, as `services.jobs.cancel` does one (queued ones
    never start; running ones stop within about a second); returns those asked to stop. A batch the
    caller may not see is NotFound; one already done asks nothing of anyone."""
    with ctx.db.session() as session:
        batch = batch_store.get_batch(session, batch_id, caller.owner_filter)
        if batch is None:
            raise NotFound("no such batch")
        jobs.lock_owner(session, batch.owner_id)  # as a release does first: no deadlock with one
        unfinished = [job.id for job in batch_store.unfinished_jobs(session, batch_id)]
        jobs.request_cancels(session, unfinished, actor_key_id=caller.key_id)
        owner = batch.owner_id
    if unfinished:
        send(ctx, Messages(owners={owner}))  # cancelled queued jobs free their client's turn now
    return unfinished
