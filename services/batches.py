"""Batches: many requests of one kind in one call. Each item is validated on its own (a bad one is kept
as rejected, the rest run) and identical requests are solved once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from services.context import Caller, Context
from services.errors import Invalid
from services.jobs import check_unfinished_quota, checked_time_limit, kind_named, validated_params
from services.messages import Messages, publish_deliveries, send
from services.webhooks import checked_callback_url
from store import batches as batch_store
from store import jobs
from store import webhooks as webhook_store
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


def submit_batch(
    ctx: Context,
    caller: Caller,
    kind_name: str,
    raw_items: list[dict[str, Any]],
    time_limit: float | None,
    present: Callable[[Session, Batch], T],
    callback_url: str | None = None,
) -> T:
    """Store the batch and its distinct jobs, then wake the workers. Returns what `present` makes of the
    batch in the same transaction, before any worker could change it."""
    items = _items(kind_name, raw_items)
    limit = checked_time_limit(ctx, time_limit, kind_named(kind_name))
    callback = checked_callback_url(ctx.settings, callback_url)
    with ctx.db.session() as session:
        distinct = len(
            {jobs.params_hash(kind_name, item.params) for item in items if item.params is not None}
        )
        check_unfinished_quota(ctx, session, caller, distinct)
        batch, job_ids = batch_store.create_batch(
            session,
            owner_id=caller.key_id,
            kind=kind_name,
            items=items,
            time_limit=limit,
            callback_url=callback,
        )
        if callback and not job_ids:  # every item rejected: done at once
            webhook_store.add_batch_delivery(session, batch.id, caller.key_id, callback)
        presented = present(session, batch)
    if job_ids:
        send(ctx, Messages(owners={caller.key_id}))
    elif callback:
        publish_deliveries(ctx.broker, ctx.db)
    return presented
