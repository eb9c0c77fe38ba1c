"""The dashboard's pages for every key: a job's picture and the "new job" form of each kind."""

from __future__ import annotations

import json
import sys
import uuid
from typing import Any

from flask import Response, abort, redirect, render_template, request, url_for

from api.admin import present
from api.admin.views import bp, caller_of_session
from api.deps import context
from api.errors import status_of
from api.limits import counts_as_submit, invalid_form
from kinds import KINDS
from services import jobs as job_service
from services.errors import Invalid, ServiceError


@bp.get("/jobs/<uuid:job_id>/picture.svg")
def job_picture(job_id: uuid.UUID) -> Response:
    """The job's picture for a signed-in key, as `GET /jobs/{id}/picture.svg` for a Bearer key."""
    try:
        svg = job_service.picture(context(), caller_of_session(), job_id)
    except ServiceError as refused:
        abort(status_of(refused), refused.message)
    return Response(svg, mimetype="image/svg+xml")


@bp.get("/new")
def new_job() -> str:
    return render_template(
        "admin/new_job.html", kinds=sorted(KINDS.values(), key=lambda k: k.name), kind=None
    )


@bp.route("/new/<kind_name>", methods=["GET", "POST"])
@counts_as_submit(free_when=invalid_form)
def new_job_of_kind(kind_name: str) -> Any:
    """A params editor prefilled with the kind's example; the form is checked exactly as `POST /jobs`
    (services.jobs.submit_request) and its field errors are shown beside the editor."""
    kind = KINDS.get(kind_name)
    if kind is None:
        abort(404, "no such kind")
    if request.method == "GET":
        return _form(kind_name, present.pretty_json(kind.example_params()), "")
    text, time_limit = request.form.get("params", ""), request.form.get("time_limit", "").strip()
    try:
        params = json.loads(text or "{}")
    except json.JSONDecodeError as err:
        return _form(kind_name, text, time_limit, [("params", f"not JSON: {err}")]), 422
    except ValueError:  # Python's own cap on the digits of an integer it reads
        too_long = (
            f"not JSON this service reads: a number has more than {sys.get_int_max_str_digits():,} digits"
        )
        return _form(kind_name, text, time_limit, [("params", too_long)]), 422
    except RecursionError:
        return _form(kind_name, text, time_limit, [("params", "not JSON: nested too deeply")]), 422
    body: dict[str, Any] = {"kind": kind_name, "params": params}
    if time_limit:
        body["time_limit"] = _number(time_limit)
    try:
        submitted = job_service.submit_request(context(), caller_of_session(), body)
    except Invalid as refused:
        return _form(kind_name, text, time_limit, present.field_errors(refused.errors)), 422
    except ServiceError as refused:
        return _form(kind_name, text, time_limit, [("", refused.message)]), status_of(refused)
    return redirect(url_for("admin.job_page", job_id=submitted.job.id))


def _number(text: str) -> Any:
    """The time limit field as the JSON number it spells ("90" → 90); any other text as it is, for the
    schema to refuse as POST /jobs would."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _form(kind_name: str, text: str, time_limit: str, errors: list[tuple[str, str]] | None = None) -> str:
    kind = KINDS[kind_name]
    return render_template(
        "admin/new_job.html",
        kinds=sorted(KINDS.values(), key=lambda k: k.name),
        kind=kind,
        params_text=text,
        time_limit=time_limit,
        errors=errors or [],
        schema=kind.params_schema.__name__,
    )
