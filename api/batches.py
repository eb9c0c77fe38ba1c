"""/batches: many requests of one kind in one call, solved in parallel; items paged with their results."""

from __future__ import annotations

import csv
import io
import json
import uuid
from collections.abc import Iterator
from typing import Any

from flask import Response, request, url_for
from flask.views import MethodView
from flask_smorest import abort
from marshmallow import RAISE

from api import job_reads
from api.auth import auth
from api.bodies import Blueprint
from api.deps import caller, context, database, settings
from api.errors import abort_with
from api.resources import job_error
from api.rows import export_response
from api.spools import encoded
from core.states import REJECTED_ITEM, batch_done
from schemas import batches as batch_schemas
from services import batches as batch_service
from services.reads import batches as batch_reads
from services.reads.batches import BatchPage, BatchView, ItemQuery, ItemView
from services.reads.jobs import JobView

blp = Blueprint("batches", __name__, url_prefix="/batches", description="Batches of puzzle requests")

EXPORT_PAGE = 500
CSV_COLUMNS = ("position", "client_id", "state", "job_id", "result", "error", "errors")
EXPORT_TYPES = {"ndjson": "application/x-ndjson", "csv": "text/csv"}


def item_resource(item: ItemView, job: JobView | None, *, is_admin: bool) -> dict[str, Any]:
    error = job_error(job, is_admin=is_admin) if job is not None else None
    return {
        "client_id": item.client_id,
        "position": item.position,
        "state": job.state if job is not None else REJECTED_ITEM,
        "job_id": item.job_id,
        "result": job.result if job is not None else None,
        "error": error,
        "errors": item.error,
    }


def _batch_resource(page: BatchPage, *, is_admin: bool) -> dict[str, Any]:
    batch, counts, rows = page.batch, page.counts, page.items
    next_cursor = str(rows[-1].item.position) if page.more else None
    return {
        "id": batch.id,
        "kind": batch.kind,
        "created_at": batch.created_at,
        "item_count": batch.item_count,
        "job_count": batch.job_count,
        "counts": counts,
        "done": batch_done(counts),
        "items": [item_resource(item, job, is_admin=is_admin) for item, job in rows],
        "next_cursor": next_cursor,
        "links": {
            "self": url_for("batches.BatchItemView", batch_id=batch.id),
            **{fmt: url_for(f"batches.results_{fmt}", batch_id=batch.id) for fmt in EXPORT_TYPES},
        },
    }


def _cursor(value: str | None) -> int:
    """The position a page starts after. ASCII digits only: '²'.isdigit() holds (and int() refuses it),
    and int() reads '٣' as 3; a position fits PostgreSQL's integer."""
    if value is None:
        return -1
    if not (value.isascii() and value.isdigit() and len(value) <= 9):
        abort(422, errors={"cursor": ["not a cursor from this service"]})
    return int(value)


@blp.route("")
class BatchCollection(MethodView):
    decorators = [auth.login_required]

    @blp.arguments(batch_schemas.BatchCreate)
    @blp.response(202, batch_schemas.Batch)
    @blp.alt_response(
        422,
        description="Unknown kind, no or too many items, a repeated client_id or a reused Idempotency-Key",
    )
    @blp.alt_response(415, description="The body is not sent as application/json")
    def post(self, body: dict[str, Any]) -> Any:
        """Submit up to 500 requests of one kind. Each item is validated on its own (a bad one is
        `rejected`, the rest run); identical requests are solved once. Answers 202 with the batch;
        honours Idempotency-Key."""
        who = caller()
        shown = ItemQuery(limit=50, max_bytes=settings().max_batch_page_bytes)

        def present(page: BatchPage) -> dict[str, Any]:
            return _batch_resource(page, is_admin=who.is_admin)

        submitted = batch_service.submit_batch(
            context(),
            who,
            body["kind"],
            body["items"],
            body["time_limit"],
            present=present,
            shown=shown,
            callback_url=body["callback_url"],
            idempotency_key=request.headers.get("Idempotency-Key"),
            priority=body["priority"],
            queue_timeout=body["queue_timeout"],
        )
        resource = submitted.presented
        headers = {"Location": resource["links"]["self"]}
        if not submitted.created:
            headers["Idempotent-Replayed"] = "true"
        return resource, 202, headers


@blp.route("/<uuid:batch_id>")
class BatchItemView(MethodView):
    decorators = [auth.login_required]

    @blp.arguments(batch_schemas.BatchGetArgs, location="query", unknown=RAISE)
    @blp.response(200, batch_schemas.Batch)
    @blp.alt_response(404, description="No such batch, or not yours")
    def get(self, args: dict[str, Any], batch_id: uuid.UUID) -> Any:
        """The batch: counts by state and a page of items (submission order) with their results."""
        who = caller()
        batch = _visible_batch(batch_id, who.owner_filter)
        query = ItemQuery(
            _cursor(args.get("cursor")), args["limit"], args.get("state"), settings().max_batch_page_bytes
        )
        page = batch_reads.batch_page(database(), batch, query)
        resource = _batch_resource(page, is_admin=who.is_admin)
        headers = {} if resource["done"] else {"Retry-After": "1"}
        return resource, 200, headers


@blp.route("/<uuid:batch_id>/cancel", methods=["POST"], endpoint="cancel_batch")
@auth.login_required
@blp.response(202, batch_schemas.Batch)
@blp.alt_response(404, description="No such batch, or not yours")
def cancel_batch(batch_id: uuid.UUID) -> Any:
    """Cancel every job of the batch not yet finished, at once: queued ones never start, running ones are
    interrupted within about a second. Answers the batch (its first page of items) as it is then; a batch
    already done is answered as it is."""
    who = caller()
    for job_id in batch_service.cancel_batch(context(), who, batch_id):
        job_reads.forget(job_id)
    page = batch_reads.batch_page(
        database(),
        _visible_batch(batch_id, who.owner_filter),
        ItemQuery(max_bytes=settings().max_batch_page_bytes),
    )
    return _batch_resource(page, is_admin=who.is_admin)


def _visible_batch(batch_id: uuid.UUID, owner_id: int | None) -> BatchView:
    batch = batch_reads.get_batch(database(), batch_id, owner_id)
    if batch is None:
        abort_with(404, message="no such batch")
    return batch


# -- every item at once ----------------------------------------------------------------------------
def results_response(batch_id: uuid.UUID, fmt: str, *, key_id: int, is_admin: bool) -> Response:
    """Every item of a batch (the caller may see) with its state, job, result and errors, as NDJSON (one
    object a line) or CSV (one row an item; results and errors as JSON text): an export as a job's rows
    are (api.rows.export_response: one of the key's places, read in the process's turn, sent holding no
    thread or connection). Each request reads its own: the items change until the batch is done."""

    def parts() -> Iterator[bytes]:
        items = _every_item(batch_id, is_admin)
        return encoded(_ndjson(items) if fmt == "ndjson" else _csv(items))

    response = export_response(key_id, ("batch", batch_id, uuid.uuid4()), parts, EXPORT_TYPES[fmt])
    response.headers["Content-Disposition"] = f"attachment; filename=batch-{batch_id}.{fmt}"
    return response


def _every_item(batch_id: uuid.UUID, is_admin: bool) -> Iterator[dict[str, Any]]:
    """Every item in submission order, read a page per transaction."""
    for item, job in batch_reads.every_item(database(), batch_id, EXPORT_PAGE):
        yield item_resource(item, job, is_admin=is_admin)


def _json(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


def _ndjson(items: Iterator[dict[str, Any]]) -> Iterator[str]:
    for item in items:
        yield _json(item) + "\n"


def _csv(items: Iterator[dict[str, Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    for item in items:
        cells = [item[c] for c in CSV_COLUMNS]
        writer.writerow([_json(c) if isinstance(c, dict | list) else c for c in cells])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()


def _add_results_route(fmt: str) -> None:
    @blp.route(f"/<uuid:batch_id>/results.{fmt}", endpoint=f"results_{fmt}")
    @auth.login_required
    @blp.response(200, description=f"Every item as {fmt.upper()}, streamed", content_type=EXPORT_TYPES[fmt])
    @blp.alt_response(404, description="No such batch, or not yours")
    def results(batch_id: uuid.UUID) -> Response:
        """Every item of the batch in submission order with its state, job, result and errors (the same
        fields as the batch's `items`), whole: NDJSON or CSV."""
        who = caller()
        _visible_batch(batch_id, who.owner_filter)
        return results_response(batch_id, fmt, key_id=who.key_id, is_admin=who.is_admin)


for _fmt in EXPORT_TYPES:
    _add_results_route(_fmt)
