"""A job's stored rows (kinds that store them, e.g. Planet X boards at /jobs/{id}/boards): keyset pages
with the kind's filters, and NDJSON / CSV streamed in constant memory.

One blueprint per rows hook, named after it (Planet X's is "boards", endpoints boards_page, boards_csv,
boards_ndjson). Its views take the hook's query schemas, so the spec documents the kind's filters and a
bad query is a 422 naming the field before any job is looked up."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Hashable, Iterator
from typing import Any, cast

import numpy as np
from flask import Response, request
from flask_smorest import abort
from marshmallow import RAISE, Schema

from api.auth import auth
from api.bodies import Blueprint
from api.bulk_lines import LineFormat, render_lines
from api.deps import caller, context, database
from api.errors import RunAgain, run_again
from api.extension import zolve
from api.media import served_as
from api.slots import Slots, Turns
from api.spools import Reader, encoded
from core import waiting
from core.states import JobState
from core.waiting import Spooled
from kinds import KINDS, Rows
from kinds.base import csv_cell
from services import jobs as job_service
from services.reads import rows as row_reads
from services.reads.jobs import JobView

#: rows name -> (its hook, its blueprint), built once per process
_BLUEPRINTS: dict[str, tuple[Rows, Blueprint]] = {}


def _job_with_rows(job_id: uuid.UUID, rows: Rows, args: dict[str, Any]) -> JobView:
    """The caller's job with these rows, whose filters `args` its rows can meet (else 422)."""
    job = job_service.get(context(), caller(), job_id)
    kind = KINDS.get(job.kind)
    if kind is None or kind.rows is None or kind.rows.name != rows.name:
        abort(404, message=f"jobs of kind {job.kind} have no {rows.name}")
    refused = rows.refused_filters(job.params, args)
    if refused:
        abort(422, errors={"query": refused})
    return job


def _renderer(job: JobView, rows: Rows) -> Callable[[int, bytes | None], dict[str, Any]]:
    """A stored row (key, payload) → {code: its key, <item>: its human form} for this job."""
    return lambda key, payload: {"code": key, rows.item: rows.render(job.params, key, payload)}


def _rows_of(job: JobView) -> uuid.UUID:
    return job.rows_job_id or job.id


#: how long an export waits for its turn to read (max_export_reads a process) before a 503
EXPORT_READ_WAIT_SECONDS = 30.0


def exported(job: JobView, rows: Rows, args: dict[str, Any], fmt: str, key_id: int) -> Response:
    """Every row of a succeeded job (else 409) matching the filters, as `csv` or `ndjson` (see
    export_response). The same export being sent to another client is read from its spool (api.spools)."""
    if job.state != JobState.SUCCEEDED:
        abort(409, message=f"the job is {job.state}: {rows.name} are exported once it has succeeded")
    parts = lambda: encoded(_rendered(job, rows, args, fmt))  # noqa: E731 - read in the process's turn
    mimetype = "text/csv" if fmt == "csv" else "application/x-ndjson"
    response = export_response(key_id, _spool_key(job, args, fmt), parts, mimetype)
    response.headers["X-Total-Count"] = str((job.result or {}).get("count", ""))
    return response


def export_response(
    key_id: int, key: Hashable, parts: Callable[[], Iterator[bytes]], mimetype: str
) -> Response:
    """An export in one of the key's places (else 429): `parts()` read whole into a spool in one go, and
    the database connection goes back before a byte is sent: a client that drains slowly holds a spool,
    never a connection, a snapshot or (under the edge: core.waiting) a thread. The spool of the same
    `key` being sent to another client is read instead. Else the request reads in the process's turn (at
    most max_export_reads at once), waiting for it on the edge's loop; past EXPORT_READ_WAIT_SECONDS, 503."""
    rerun = waiting.rerun_of(request.environ)
    place = _place(key_id, rerun)
    spools = zolve().spools
    try:
        reader = spools.reader(key)
        if reader is None:
            reader = _read_in_turn(rerun, key, parts)
        else:
            _leave_the_line(rerun)  # filled by another request while this one waited: read nothing
    except RunAgain:
        raise  # its request goes on, and keeps its place
    except BaseException:
        place.give_back()
        raise
    response = Response(
        Spooled(reader, place.give_back), mimetype=served_as(mimetype), direct_passthrough=True
    )
    response.headers["Content-Length"] = str(reader.size)
    return response


def _spool_key(job: JobView, args: dict[str, Any], fmt: str) -> tuple[str, ...]:
    """What an export's bytes depend on: its rows (a succeeded job's never change), their params (which
    render them), the filters and the format."""
    params = json.dumps(job.params, sort_keys=True, default=str)
    return (str(_rows_of(job)), params, json.dumps(args, sort_keys=True, default=str), fmt)


def _read_in_turn(rerun: waiting.Rerun | None, key: Hashable, parts: Callable[[], Iterator[bytes]]) -> Reader:
    turns = zolve().export_reads
    if not _read_turn(turns, rerun):
        run_again()  # the edge runs the request again in its turn
    try:
        spools = zolve().spools
        return spools.reader(key) or spools.fill(key, parts)  # filled meanwhile by another request?
    finally:
        turns.give_back()


def _rendered(job: JobView, rows: Rows, args: dict[str, Any], fmt: str) -> Iterator[bytes] | Iterator[str]:
    """The export's text, rendered in bulk where the kind says how (Rows.fixed_text), else row by row."""
    if rows.fixed_text is not None and not rows.payloads:
        return _rendered_in_bulk(job, rows, rows.fixed_text, args, fmt)
    return _rendered_here(job, rows, args, fmt)


class _Place:
    """A key's export place, given back once: when its body is closed, or when its request ends first."""

    def __init__(self, places: Slots, key_id: int) -> None:
        self.places, self.key_id, self.held = places, key_id, True

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.places.give_back(self.key_id)


def _place(key_id: int, rerun: waiting.Rerun | None) -> _Place:
    """The request's place, taken on its first run (kept by its later runs), or 429."""
    if rerun is not None and "export place" in rerun.kept:
        return cast(_Place, rerun.kept["export place"])
    places = zolve().exports
    if not places.take(key_id):
        abort(
            429,
            message=f"at most {places.per_key} exports of one key at a time (fewer when the server is busy); "
            "retry when one ends",
            headers={"Retry-After": "2"},
        )
    place = _Place(places, key_id)
    if rerun is not None:
        rerun.kept["export place"] = place
        rerun.on_end(place.give_back)
    return place


def _read_turn(turns: Turns, rerun: waiting.Rerun | None) -> bool:
    """Whether the request holds a turn to read now; False: the edge runs it again when it does."""
    if rerun is None:  # another server than the edge: wait here
        return waiting.in_thread(lambda alone: _read_turn(turns, alone) or None) is True
    wake = cast(waiting.Wake | None, rerun.kept.get("export turn"))
    if wake is None:
        wake = rerun.kept["export turn"] = waiting.Wake()
        rerun.on_end(lambda: turns.leave(wake))
    wake.take()
    if turns.take(wake):
        return True
    remaining = rerun.arrived + EXPORT_READ_WAIT_SECONDS - time.monotonic()
    if remaining <= 0:
        turns.leave(wake)
        _busy()
    rerun.ask(wake, remaining)
    return False


def _leave_the_line(rerun: waiting.Rerun | None) -> None:
    """A request that waited for its turn and needs it no more leaves the line now, not when it ends:
    at its head it would hold back those behind it for as long as its answer is sent."""
    wake = rerun.kept.pop("export turn", None) if rerun is not None else None
    if wake is not None:
        zolve().export_reads.leave(wake)


def _busy() -> None:
    abort(
        503, message="the server is busy reading other exports; retry shortly", headers={"Retry-After": "2"}
    )


def _rendered_in_bulk(
    job: JobView,
    rows: Rows,
    fixed_text: Callable[[dict[str, Any], np.ndarray], np.ndarray],
    args: dict[str, Any],
    fmt: str,
) -> Iterator[bytes]:
    """Keys read in chunks, each chunk's lines composed at once (api.bulk_lines)."""
    if fmt == "csv":
        yield f"code,{rows.item}\n".encode()
        form = LineFormat.csv()
    else:
        form = LineFormat.ndjson(rows.item)
    for codes in row_reads.key_chunks(database(), _rows_of(job), rows.filters(args)):
        yield render_lines(codes, fixed_text(job.params, codes), form)


def _rendered_here(job: JobView, rows: Rows, args: dict[str, Any], fmt: str) -> Iterator[str]:
    render = _renderer(job, rows)
    if fmt == "csv":
        yield f"code,{rows.item}\n"

        def line(row: dict[str, Any]) -> str:
            return f"{row['code']},{csv_cell(row[rows.item])}\n"
    else:

        def line(row: dict[str, Any]) -> str:
            return json.dumps(row) + "\n"

    chunks = row_reads.stream(database(), _rows_of(job), rows.filters(args), payloads=rows.payloads)
    for chunk in chunks:
        if rows.payloads:
            yield "".join(line(render(key, payload)) for key, payload in chunk)
        else:
            yield "".join(line(render(key, None)) for key in chunk)


def _blueprint(rows: Rows) -> Blueprint:
    """The pages and exports of one rows hook, documented with its query and page schemas."""
    blp = Blueprint(rows.name, __name__, url_prefix="/jobs", description=rows.description or rows.name)
    _add_page(blp, rows)
    _add_export(blp, rows, "csv", f"code,{rows.item} rows", "text/csv")
    ndjson = f"one JSON object per line: {{code, {rows.item}}}"
    _add_export(blp, rows, "ndjson", ndjson, "application/x-ndjson")
    return blp


def _missing(rows: Rows) -> str:
    return f"No such job, or not yours, or a kind without {rows.name}"


def _doc(summary: str, query: type[Schema]) -> dict[str, str]:
    """An operation's summary, and as its description what the kind's query schema says of its filters
    (the schema's own docstring, never one inherited from marshmallow)."""
    doc = query.__dict__.get("__doc__")
    return {"summary": summary, "description": " ".join(doc.split())} if doc else {"summary": summary}


def _add_page(blp: Blueprint, rows: Rows) -> None:
    @blp.route(f"/<uuid:job_id>/{rows.name}", endpoint=f"{rows.name}_page")
    @auth.login_required
    @blp.arguments(rows.page_query, location="query", unknown=RAISE)
    @blp.response(200, rows.page_schema)
    @blp.alt_response(404, description=_missing(rows))
    @blp.doc(**_doc(f"{rows.name.capitalize()} in code order, a page at a time.", rows.page_query))
    def page(args: dict[str, Any], job_id: uuid.UUID) -> Any:
        job = _job_with_rows(job_id, rows, args)
        found, next_cursor = row_reads.page(
            database(), _rows_of(job), rows.filters(args), args["limit"], args.get("cursor"), rows.payloads
        )
        render = _renderer(job, rows)
        return {"items": [render(key, payload) for key, payload in found], "next_cursor": next_cursor}


def _add_export(blp: Blueprint, rows: Rows, fmt: str, body: str, content_type: str) -> None:
    @blp.route(f"/<uuid:job_id>/{rows.name}.{fmt}", endpoint=f"{rows.name}_{fmt}")
    @auth.login_required
    @blp.arguments(rows.export_query, location="query", unknown=RAISE)
    @blp.response(200, description=body, content_type=content_type)
    @blp.alt_response(404, description=_missing(rows))
    @blp.alt_response(409, description="The job has not succeeded (yet): its rows are not all there")
    @blp.alt_response(429, description="This key already streams as many exports as it may at once")
    @blp.doc(**_doc(f"Every {rows.item} as {fmt.upper()}, streamed.", rows.export_query))
    def export_view(args: dict[str, Any], job_id: uuid.UUID) -> Response:
        job = _job_with_rows(job_id, rows, args)
        return exported(job, rows, args, fmt, caller().key_id)


def blueprints() -> list[Blueprint]:
    """A blueprint for each distinct rows hook of the registered kinds (plugins' included)."""
    for kind in KINDS.values():
        if kind.rows is None:
            continue
        known = _BLUEPRINTS.get(kind.rows.name)
        if known is None:
            _BLUEPRINTS[kind.rows.name] = (kind.rows, _blueprint(kind.rows))
        elif known[0] != kind.rows:
            raise ValueError(f"two different rows hooks are named {kind.rows.name!r} (kind {kind.name})")
    return [blp for _, blp in _BLUEPRINTS.values()]


def page_endpoint(rows_name: str) -> str:
    return f"{rows_name}.{rows_name}_page"


def export_endpoint(rows_name: str, fmt: str) -> str:
    return f"{rows_name}.{rows_name}_{fmt}"
