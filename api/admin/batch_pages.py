"""Batches on the dashboard: the list (a client's own, an admin's everyone's), a batch's page (counts by
state, its items with their jobs and pictures, live until done) and its results exported whole."""

from __future__ import annotations

import uuid
from typing import Any

from flask import Response, abort, render_template, request, url_for

from api.admin.views import bp, caller_of_session
from api.batches import results_response
from api.deps import database
from core.states import FINAL_STATES
from store import batches as batch_store
from store import listing
from store.models import Batch

PAGE = 25
ITEMS_PAGE = 50


@bp.get("/batches")
def batches() -> str:
    cursor = request.args.get("cursor") or None
    try:
        before = listing.decode_cursor(cursor) if cursor else None
    except ValueError:
        abort(400, "not a cursor from this page")
    with database().session() as session:
        rows = batch_store.list_batches(
            session, caller_of_session().owner_filter, limit=PAGE + 1, before=before
        )
        counts = {batch.id: batch_store.item_counts(session, batch.id) for batch in rows[:PAGE]}
    next_url = (
        url_for("admin.batches", cursor=listing.encode_cursor(rows[PAGE - 1])) if len(rows) > PAGE else None
    )
    return render_template(
        "admin/batches.html", batches=rows[:PAGE], counts=counts, next_url=next_url, cursor=cursor
    )


def _batch_or_404(session: Any, batch_id: uuid.UUID) -> Batch:
    batch = batch_store.get_batch(session, batch_id, caller_of_session().owner_filter)
    if batch is None:
        abort(404, "no such batch")
    return batch


def _after() -> int:
    value = request.args.get("after", "")
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 9 else -1


@bp.get("/batches/<uuid:batch_id>")
def batch_page(batch_id: uuid.UUID) -> str:
    after = _after()
    with database().session() as session:
        batch = _batch_or_404(session, batch_id)
        counts = batch_store.item_counts(session, batch_id)
        rows = batch_store.list_items(session, batch_id, after=after, limit=ITEMS_PAGE)
    done = all(state in (*FINAL_STATES, "rejected") for state in counts)
    next_url = (
        url_for("admin.batch_page", batch_id=batch_id, after=rows[-1][0].position)
        if len(rows) == ITEMS_PAGE
        else None
    )
    return render_template(
        "admin/batch.html", batch=batch, counts=counts, rows=rows, done=done, next_url=next_url, after=after
    )


@bp.get("/batches/<uuid:batch_id>/results.<any(csv, ndjson):fmt>")
def batch_export(batch_id: uuid.UUID, fmt: str) -> Response:
    """Every item with its state, job, result and errors: NDJSON (one object a line) or CSV."""
    with database().session() as session:
        _batch_or_404(session, batch_id)
    return results_response(batch_id, fmt, is_admin=caller_of_session().is_admin)
