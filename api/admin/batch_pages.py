"""Batches on the dashboard: the list (a client's own, an admin's everyone's), a batch's page (counts by
state, its items with their jobs and pictures, live until done) and its results exported whole."""

from __future__ import annotations

import uuid
from typing import Any

from flask import Response, abort, flash, redirect, render_template, request, url_for

from api import job_reads
from api.admin.views import bp, caller_of_session, confirm_page, refusal_page
from api.batches import results_response
from api.deps import context, database, settings
from core.states import batch_done
from services import batches as batch_service
from services.errors import ServiceError
from services.reads import batches as batch_reads
from services.reads.batches import BatchView, ItemQuery

PAGE = 25
ITEMS_PAGE = 50


@bp.get("/batches")
def batches() -> str:
    cursor = request.args.get("cursor") or None
    try:
        found = batch_reads.list_batches(
            database(), caller_of_session().owner_filter, limit=PAGE, cursor=cursor
        )
    except ValueError:
        abort(400, "not a cursor from this page")
    next_url = url_for("admin.batches", cursor=found.next_cursor) if found.next_cursor else None
    return render_template(
        "admin/batches.html", batches=found.batches, counts=found.counts, next_url=next_url, cursor=cursor
    )


def _batch_or_404(batch_id: uuid.UUID) -> BatchView:
    batch = batch_reads.get_batch(database(), batch_id, caller_of_session().owner_filter)
    if batch is None:
        abort(404, "no such batch")
    return batch


def _after() -> int:
    value = request.args.get("after", "")
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 9 else -1


@bp.get("/batches/<uuid:batch_id>")
def batch_page(batch_id: uuid.UUID) -> str:
    after = _after()
    query = ItemQuery(after, ITEMS_PAGE, max_bytes=settings().max_batch_page_bytes)
    page = batch_reads.batch_page(database(), _batch_or_404(batch_id), query)
    rows = page.items
    done = batch_done(page.counts)
    next_url = (
        url_for("admin.batch_page", batch_id=batch_id, after=rows[-1].item.position) if page.more else None
    )
    return render_template(
        "admin/batch.html",
        batch=page.batch,
        counts=page.counts,
        rows=rows,
        done=done,
        next_url=next_url,
        after=after,
    )


@bp.route("/batches/<uuid:batch_id>/cancel", methods=["GET", "POST"])
def cancel_batch(batch_id: uuid.UUID) -> Any:
    """Every job of the batch not yet finished cancelled at once (services.batches.cancel_batch): a GET
    asks first, or says there is nothing to cancel."""
    batch = _batch_or_404(batch_id)
    back = url_for("admin.batch_page", batch_id=batch_id)
    if request.method == "GET":
        counts = batch_reads.batch_page(database(), batch, ItemQuery(limit=1)).counts
        if batch_done(counts):
            return refusal_page(
                "Cancel batch", "Every item of the batch has finished: nothing to cancel.", back, "batch"
            )
        message = f"Cancel every job of {batch.kind} batch {batch.id} not yet finished?"
        return confirm_page("Cancel batch", message, back, "batch")
    try:
        asked = batch_service.cancel_batch(context(), caller_of_session(), batch_id)
    except ServiceError as refused:
        flash(refused.message, "error")
    else:
        for job_id in asked:
            job_reads.forget(job_id)
        flash(f"cancel requested for {len(asked)} jobs", "ok")
    return redirect(back)


@bp.get("/batches/<uuid:batch_id>/results.<any(csv, ndjson):fmt>")
def batch_export(batch_id: uuid.UUID, fmt: str) -> Response:
    """Every item with its state, job, result and errors: NDJSON (one object a line) or CSV."""
    _batch_or_404(batch_id)
    who = caller_of_session()
    return results_response(batch_id, fmt, key_id=who.key_id, is_admin=who.is_admin)
