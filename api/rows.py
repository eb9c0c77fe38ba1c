"""A job's stored rows (kinds that store them, e.g. Planet X boards at /jobs/{id}/boards): keyset pages
with the kind's filters, and NDJSON / CSV streamed in constant memory."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from flask import Response, request, stream_with_context
from flask_smorest import Blueprint, abort
from marshmallow import EXCLUDE, RAISE, Schema

from api.auth import auth
from api.deps import caller, context, database
from kinds import KINDS, Rows
from schemas.rows import RowPage, RowPageQuery
from services import jobs as job_service
from store import rows as row_store
from store.models import Job

blp = Blueprint("rows", __name__, url_prefix="/jobs", description="A job's stored rows (Planet X boards)")

#: the path segment of each kind's rows, e.g. /jobs/{id}/boards
ROW_NAMES = sorted({kind.rows.name for kind in KINDS.values() if kind.rows})


def _job_with_rows(job_id: uuid.UUID, rows_name: str) -> tuple[Job, Rows]:
    job = job_service.get(context(), caller(), job_id)
    kind = KINDS.get(job.kind)
    if kind is None or kind.rows is None or kind.rows.name != rows_name:
        abort(404, message=f"jobs of kind {job.kind} have no {rows_name}")
    return job, kind.rows


def _query(schema: type[Schema]) -> dict[str, Any]:
    """The kind's query arguments, validated like every other endpoint's (422 naming the field)."""
    return blp.ARGUMENTS_PARSER.parse(schema(), request, location="query", unknown=RAISE)


def _renderer(job: Job, rows: Rows) -> Callable[[int], dict[str, Any]]:
    """Row → {code, <item>} for this job."""
    return lambda code: {"code": code, rows.item: rows.render(job.params, code)}


def _rows_of(job: Job) -> uuid.UUID:
    return job.rows_job_id or job.id


@auth.login_required
@blp.arguments(RowPageQuery, location="query", unknown=EXCLUDE)
@blp.response(200, RowPage)
@blp.alt_response(404, description="No such job, or not yours, or a kind without these rows")
def rows_page(_: dict[str, Any], job_id: uuid.UUID, rows_name: str) -> Any:
    """Rows in code order, a page at a time, filtered by the kind's query parameters (Planet X boards:
    e.g. `?x=7`, Planet X in sector 7; likewise e, g, d, a, c, repeatable)."""
    job, rows = _job_with_rows(job_id, rows_name)
    args = _query(rows.page_query)
    codes, next_cursor = row_store.page(
        database(), _rows_of(job), rows.filters(args), args["limit"], args.get("cursor")
    )
    render = _renderer(job, rows)
    return {"items": [render(code) for code in codes], "next_cursor": next_cursor}


def export(job: Job, rows: Rows, args: dict[str, Any], fmt: str) -> Response:
    """Every row of the job matching the filters, streamed as `csv` or `ndjson`."""
    db, render = database(), _renderer(job, rows)
    if fmt == "csv":
        header, mimetype = f"code,{rows.item}\n", "text/csv"

        def line(row: dict[str, Any]) -> str:
            return f"{row['code']},{row[rows.item]}\n"
    else:
        header, mimetype, line = "", "application/x-ndjson", lambda row: json.dumps(row) + "\n"

    def generate() -> Iterator[str]:
        if header:
            yield header
        for chunk in row_store.stream(db, _rows_of(job), rows.filters(args)):
            yield "".join(line(render(code)) for code in chunk)

    response = Response(stream_with_context(generate()), mimetype=mimetype)
    response.headers["X-Total-Count"] = str((job.result or {}).get("count", ""))
    return response


@auth.login_required
@blp.response(200, description="CSV (code and the row's readable form) or NDJSON (one object per line)")
@blp.alt_response(404, description="No such job, or not yours, or a kind without these rows")
def rows_export(job_id: uuid.UUID, rows_name: str, fmt: str) -> Response:
    """Every row, streamed, filtered by the kind's query parameters as for pages."""
    job, rows = _job_with_rows(job_id, rows_name)
    return export(job, rows, _query(rows.export_query), fmt)


def page_endpoint(rows_name: str) -> str:
    return f"rows.{rows_name}_page"


def export_endpoint(rows_name: str, fmt: str) -> str:
    return f"rows.{rows_name}_{fmt}"


for _name in ROW_NAMES:
    blp.route(f"/<uuid:job_id>/{_name}", endpoint=f"{_name}_page", defaults={"rows_name": _name})(rows_page)
    for _fmt in ("csv", "ndjson"):
        blp.route(
            f"/<uuid:job_id>/{_name}.{_fmt}",
            endpoint=f"{_name}_{_fmt}",
            defaults={"rows_name": _name, "fmt": _fmt},
        )(rows_export)
