"""A job's stored boards (Planet X enumeration): keyset pages, and NDJSON / CSV streamed in constant
memory."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from flask import Response, current_app, stream_with_context
from flask_smorest import Blueprint, abort
from marshmallow import RAISE

from api.auth import auth, current_principal
from schemas.planetx import BoardExportQuery, BoardPage, BoardQuery
from store import jobs as job_store
from store import rows
from store.models import Job
from zolve.kinds import KINDS

blp = Blueprint("boards", __name__, url_prefix="/jobs", description="Enumerated Planet X boards")

OBJECT_PARAMS = "exgdac"  # query parameter per object code 0..5


def _job_with_rows(job_id: uuid.UUID) -> Job:
    with current_app.extensions["zolve.db"].session() as session:
        job = job_store.get_job(session, job_id, current_principal().owner_filter)
    if job is None:
        abort(404, message="no such job")
    kind = KINDS.get(job.kind)
    if kind is None or not kind.has_rows:
        abort(404, message=f"jobs of kind {job.kind} have no boards")
    return job


def _filters(args: dict[str, Any]) -> list:
    return [
        rows.object_at(sector, obj)
        for obj, name in enumerate(OBJECT_PARAMS)
        for sector in args.get(name) or []
    ]


def _renderer(job: Job) -> Callable[[int], dict[str, Any]]:
    """Row → {code, board} for this job, with the kind looked up once rather than per row."""
    render_row = partial(KINDS[job.kind].render_row, job.params)
    return lambda code: {"code": code, "board": render_row(code)}


def _rows_of(job: Job) -> uuid.UUID:
    return job.rows_job_id or job.id


@blp.route("/<uuid:job_id>/boards", endpoint="boards_page")
@auth.login_required
@blp.arguments(BoardQuery, location="query", unknown=RAISE)
@blp.response(200, BoardPage)
@blp.alt_response(404, description="No such job, or not yours, or a kind without boards")
def boards_page(args: dict[str, Any], job_id: uuid.UUID) -> Any:
    """Boards in code order, a page at a time; filter with e.g. `?x=7` (Planet X in sector 7)."""
    job = _job_with_rows(job_id)
    codes, next_cursor = rows.page(
        current_app.extensions["zolve.db"], _rows_of(job), _filters(args), args["limit"], args.get("cursor")
    )
    render = _renderer(job)
    return {"items": [render(code) for code in codes], "next_cursor": next_cursor}


def _export(job: Job, args: dict[str, Any], line: Any, header: str | None, mimetype: str) -> Response:
    db = current_app.extensions["zolve.db"]

    render = _renderer(job)

    def generate() -> Iterator[str]:
        if header:
            yield header
        for chunk in rows.stream(db, _rows_of(job), _filters(args)):
            yield "".join(line(render(code)) for code in chunk)

    response = Response(stream_with_context(generate()), mimetype=mimetype)
    response.headers["X-Total-Count"] = str((job.result or {}).get("count", ""))
    return response


@blp.route("/<uuid:job_id>/boards.ndjson", endpoint="boards_ndjson")
@auth.login_required
@blp.arguments(BoardExportQuery, location="query", unknown=RAISE)
@blp.response(200, description="one JSON object per line: {code, board}", content_type="application/x-ndjson")
def boards_ndjson(args: dict[str, Any], job_id: uuid.UUID) -> Response:
    """Every board as NDJSON, streamed."""
    return _export(
        _job_with_rows(job_id), args, lambda row: json.dumps(row) + "\n", None, "application/x-ndjson"
    )


@blp.route("/<uuid:job_id>/boards.csv", endpoint="boards_csv")
@auth.login_required
@blp.arguments(BoardExportQuery, location="query", unknown=RAISE)
@blp.response(200, description="code,board rows", content_type="text/csv")
def boards_csv(args: dict[str, Any], job_id: uuid.UUID) -> Response:
    """Every board as CSV, streamed."""
    return _export(
        _job_with_rows(job_id),
        args,
        lambda row: f"{row['code']},{row['board']}\n",
        "code,board\n",
        "text/csv",
    )
