"""The dashboard's pages, fragments (polled by htmx) and actions. Reads go through services.reads.

Any API key logs in: a client key sees its own jobs and batches, an admin key everyone's, and only admins
see the overview and take the operator actions (retry, requeue)."""

from __future__ import annotations

import logging
import posixpath
import re
import time
import uuid
from collections.abc import Callable
from http import HTTPStatus
from types import SimpleNamespace
from typing import Any
from urllib.parse import unquote

from flask import (
    Blueprint,
    Response,
    abort,
    flash,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response as WerkzeugResponse

from api import job_reads, rows
from api.admin import present
from api.deps import context, database, settings
from api.errors import handle_database_error, handle_pool_timeout, seconds_until_reset
from api.extension import zolve
from api.limits import counts_as_submit
from api.resources import job_error, job_links
from core.states import JOB_STATES, JobState
from kinds import KINDS
from services import jobs as job_service
from services import keys as key_service
from services.context import Caller
from services.errors import ServiceError
from services.reads import dashboard, keys
from services.reads import jobs as stored_jobs
from services.reads.dashboard import JobFilter, JobTable
from services.reads.jobs import JobPage, JobView
from services.reads.keys import KeyView

log = logging.getLogger("zolve.admin")
bp = Blueprint("admin", __name__, url_prefix="/admin", template_folder="templates", static_folder="static")
#: the largest id PostgreSQL's bigint holds: a larger one in a URL matches no page (a 404, not a 422 from
#: the database)
BIGINT_MAX = 2**63 - 1

PUBLIC = ("admin.login", "admin.static")
#: the operators' pages and actions: a client key gets 403 (its landing page, the overview, sends it to
#: its jobs instead, whether the key came in a session or a Bearer header)
ADMIN_ONLY = (
    "admin.overview",
    "admin.overview_panel",
    "admin.retry_job",
    "admin.requeue_shard",
    "admin.key_shares",
    "admin.set_key_share",
)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
PAGE_SIZE = 25
MAX_PAGE_SIZE = 200


# -- who is asking --------------------------------------------------------------------------------
def _key_from_request() -> tuple[KeyView | None, str | None]:
    """The key behind this request and how it came: a Bearer header (API clients, scripts) or the
    session cookie set at login. A revoked key ends its sessions."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token:
        if len(token) > 200:
            return None, "bearer"
        return keys.authenticate(database(), token), "bearer"
    key_id = session.get("key_id")
    if key_id is None:
        return None, None
    row = keys.get_key(database(), key_id)
    if row is None or not _session_holds(row):
        session.clear()
        return None, None
    return row, "session"


def _session_holds(key: KeyView) -> bool:
    """The session's key is not revoked, has not logged out since (its generation), and the session is
    younger than its absolute lifetime (the idle one is the cookie's signed age, see setup.py)."""
    since = session.get("since")
    return (
        key.revoked_at is None
        and session.get("generation") == key.session_generation
        and isinstance(since, int | float)
        and time.time() - since < settings().session_max_seconds
    )


@bp.before_request
def guard() -> WerkzeugResponse | None:
    """Any key: no session → the login page; a client key on an operator's page → 403 (on the overview,
    by session or Bearer alike: its jobs); forms need the CSRF token."""
    csrf = zolve().csrf
    assert csrf is not None, "the dashboard is mounted with its CSRF protection (api.app)"
    if request.endpoint in PUBLIC:
        if request.method not in SAFE_METHODS:
            csrf.protect()
        return None
    key, via = _key_from_request()
    if key is None:
        if via == "bearer":
            abort(401)
        return _to_login()
    g.key = key
    g.admin = key if key.is_admin else None
    if not key.is_admin and request.endpoint in ADMIN_ONLY:
        if request.endpoint == "admin.overview":
            return redirect(url_for("admin.jobs"))
        abort(403, "this page is for admin keys")
    if via == "session" and request.method not in SAFE_METHODS:
        csrf.protect()
    return None


def _to_login() -> WerkzeugResponse:
    target = url_for("admin.login", next=request.full_path.rstrip("?"))
    if request.headers.get("HX-Request"):
        return Response(status=204, headers={"HX-Redirect": target})
    return redirect(target)


@bp.errorhandler(HTTPException)
def http_error(error: HTTPException) -> Response:
    code = error.code or 500
    response = Response(render_template("admin/error.html", code=code, error=error), code)
    if code == 429:  # the submit budget, as the API says it
        response.headers["Retry-After"] = str(seconds_until_reset())
    return response


@bp.errorhandler(DBAPIError)
@bp.errorhandler(PoolTimeout)
def database_error(error: DBAPIError | PoolTimeout) -> Response:
    """The API's answer to the database (away, busy, or refusing a value: its status, message and
    Retry-After), as the dashboard's page for a browser."""
    answer = handle_pool_timeout(error) if isinstance(error, PoolTimeout) else handle_database_error(error)
    said = answer.get_json(silent=True) or {}
    shown = SimpleNamespace(name=HTTPStatus(answer.status_code).phrase, description=said.get("message", ""))
    page = Response(
        render_template("admin/error.html", code=answer.status_code, error=shown), answer.status_code
    )
    if "Retry-After" in answer.headers:
        page.headers["Retry-After"] = answer.headers["Retry-After"]
    return page


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    if request.method == "GET":
        return render_template("admin/login.html", next=_safe_next())
    token = request.form.get("key", "").strip()
    key = keys.authenticate(database(), token) if 0 < len(token) <= 200 else None
    if key is None:
        return render_template("admin/login.html", next=_safe_next(), error="not a valid API key"), 401
    session.clear()
    session.update(
        key_id=key.id, generation=key.session_generation, since=int(time.time()), admin=key.is_admin
    )
    session.permanent = True
    return redirect(_safe_next())


#: a dashboard path and its query, in printable ASCII: no CR/LF (a header split), no backslash or space
SAFE_NEXT = re.compile(r"/admin(?:[/?][!#-\[\]-~]*)?")


def _safe_next() -> str:
    """Where to go after login: a dashboard path only (never another site, never a broken header)."""
    target = request.values.get("next", "")
    # the path as a browser resolves it (%2e is a dot, a # ends it) must be the path as written: no dot
    # segments (/admin/../jobs is the API's /jobs)
    path = unquote(re.split(r"[?#]", target, maxsplit=1)[0])
    plain = posixpath.normpath(path) == path.rstrip("/")
    if SAFE_NEXT.fullmatch(target) and not target.startswith("/admin/login") and plain:
        return target
    return url_for("admin.overview")


@bp.post("/logout")
def logout() -> WerkzeugResponse:
    """End the key's sessions: this one and every copy of its cookie (the key's other sessions too)."""
    key_service.end_sessions(database(), g.key.id)
    session.clear()
    return redirect(url_for("admin.login"))


# -- overview -------------------------------------------------------------------------------------
def _overview_context() -> dict[str, Any]:
    alive_within = max(15.0, 3 * settings().sweep_interval)
    summary = dashboard.overview(database(), alive_within=alive_within)
    charts = [
        present.minute_chart(summary.minutes, "jobs", "Jobs finished per minute"),
        present.minute_chart(summary.minutes, "boards", "Boards written per minute"),
    ]
    return {"o": summary, "charts": charts, "states": JOB_STATES, "alive_within": alive_within}


@bp.get("/")
def overview() -> str:
    return render_template("admin/overview.html", **_overview_context())


@bp.get("/panel")
def overview_panel() -> str:
    return render_template("admin/_overview_panel.html", **_overview_context())


# -- jobs table -----------------------------------------------------------------------------------
#: how a client's page names a key not its own (an operator's, who cancelled or retried its job)
OPERATOR = "an operator"


def _names_shown(names: dict[int, str]) -> dict[int, str]:
    """Key names as the signed-in key may read them: an admin every name, a client its own (another's
    name and prefix are not its business)."""
    if g.key.is_admin:
        return names
    return {key_id: name if key_id == g.key.id else OPERATOR for key_id, name in names.items()}


def caller_of_session() -> Caller:
    """Who the signed-in key is, as the use cases take it."""
    return Caller(g.key.id, is_admin=g.key.is_admin)


def _job_filter() -> JobFilter:
    owner = request.args.get("owner", "").strip()
    owner_id = int(owner) if owner.isascii() and owner.isdigit() and len(owner) < 19 else None
    return JobFilter(
        states=[s for s in request.args.getlist("state") if s in JOB_STATES],
        kinds=[kind for kind in request.args.getlist("kind") if kind],
        owner_id=owner_id if g.key.is_admin else g.key.id,
        id_query=request.args.get("q", "").strip() or None,
    )


def _page_size() -> int:
    limit = request.args.get("limit", "")
    return (
        min(int(limit), MAX_PAGE_SIZE)
        if limit.isascii() and limit.isdigit() and 0 < len(limit) < 4 and int(limit)
        else PAGE_SIZE
    )


def _filters_not_taken(where: JobFilter) -> list[str]:
    """The filters of the request that `_job_filter` could not take, said as a person would fix them
    (else the table would show every job, or none, with no word why)."""
    said = []
    if request.args.get("owner", "").strip() and where.owner_id is None:
        said.append("owner: a key's number, as in the table's owner column")
    if unknown := [kind for kind in request.args.getlist("kind") if kind and kind not in KINDS]:
        said.append(f"kind: no kind is named {', '.join(unknown)[:80]}")
    if unknown := [s for s in request.args.getlist("state") if s not in JOB_STATES]:
        said.append(f"state: {', '.join(unknown)[:80]} is none of {', '.join(JOB_STATES)}")
    return said


def _jobs_context() -> dict[str, Any]:
    where, cursor = _job_filter(), request.args.get("cursor") or None
    error, table = None, JobTable(JobPage([], None), {})
    try:
        table = dashboard.job_table(database(), where, limit=_page_size(), cursor=cursor)
    except ValueError:
        error = "no job matches: search by a job id or its first characters; cursors come from this page"
    if not_taken := _filters_not_taken(where):
        error = "; ".join(not_taken)
    page = table.page
    args: dict[str, Any] = {k: v for k, v in request.args.lists() if k != "cursor"}
    return {
        "where": where,
        "page": page,
        "owners": table.owners,
        "error": error,
        "cursor": cursor,
        "kinds": sorted(KINDS),
        "states": JOB_STATES,
        "next_url": url_for("admin.jobs", **args, cursor=page.next_cursor) if page.next_cursor else None,
        "first_url": url_for("admin.jobs", **args),
        "rows_url": url_for("admin.job_rows", **args),
    }


@bp.get("/jobs")
def jobs() -> str:
    return render_template("admin/jobs.html", **_jobs_context())


@bp.get("/jobs/rows")
def job_rows() -> str:
    """The first page's rows, re-read every few seconds so that new jobs appear."""
    return render_template("admin/_job_rows.html", **_jobs_context())


# -- a job ----------------------------------------------------------------------------------------
def _job_or_404(job_id: uuid.UUID) -> JobView:
    job = stored_jobs.get_job(database(), job_id, caller_of_session().owner_filter)
    if job is None:
        abort(404, "no such job")
    return job


@bp.get("/jobs/<uuid:job_id>/progress")
def job_progress(job_id: uuid.UUID) -> Response:
    """The state and progress bar of one job; a final job's fragment stops the polling, and the job's own
    page, polling it, reloads once to show the outcome."""
    job = _job_or_404(job_id)
    response = Response(render_template("admin/_progress.html", job=job))
    page = url_for("admin.job_page", job_id=job_id)
    if job.is_final and request.headers.get("HX-Current-URL", "").split("?")[0].endswith(page):
        response.headers["HX-Refresh"] = "true"
    return response


@bp.get("/jobs/<uuid:job_id>")
def job_page(job_id: uuid.UUID) -> str:
    detail = dashboard.job_detail(database(), job_id, stuck_after=settings().requeue_after)
    if detail is None or not (g.key.is_admin or detail.job.owner_id == g.key.id):
        abort(404, "no such job")
    job = detail.job
    kind = KINDS.get(job.kind)
    return render_template(
        "admin/job.html",
        d=detail,
        job=job,
        steps=present.timeline(job, detail.history, _names_shown(detail.keys)),
        tables=present.result_tables(job.kind, job.result),
        has_rows=bool(kind and kind.rows and job.state == JobState.SUCCEEDED),
        rows_name=kind.rows_name if kind else "rows",
        links=job_links(job),
        # the traceback (server paths) is for admins only, as in the API's answers
        error=job_error(job, is_admin=g.key.is_admin),
        deliveries=detail.deliveries,
    )


@bp.get("/jobs/<uuid:job_id>/export.<any(csv, ndjson):fmt>")
def job_export(job_id: uuid.UUID, fmt: str) -> Response:
    """The job's rows, streamed like GET /jobs/{id}/boards.csv, for a signed-in admin."""
    job = _job_or_404(job_id)
    kind = KINDS.get(job.kind)
    if kind is None or kind.rows is None:
        abort(404, f"jobs of kind {job.kind} store no rows")
    response = rows.exported(job, kind.rows, {}, fmt, g.key.id)
    response.headers["Content-Disposition"] = f"attachment; filename={job.id}.{fmt}"
    return response


# -- actions --------------------------------------------------------------------------------------
def _confirm(title: str, message: str, job_id: uuid.UUID) -> str:
    return confirm_page(title, message, url_for("admin.job_page", job_id=job_id), "job")


def _refuse(title: str, message: str, job_id: uuid.UUID) -> tuple[str, int]:
    return refusal_page(title, message, url_for("admin.job_page", job_id=job_id), "job")


def confirm_page(title: str, message: str, back: str, back_to: str) -> str:
    """An action's question: its POST goes on, the link goes back to the page (`back_to`) it came from."""
    return render_template(
        "admin/confirm.html", title=title, message=message, back=back, back_to=back_to, ask=True
    )


def refusal_page(title: str, message: str, back: str, back_to: str) -> tuple[str, int]:
    """The confirmation page of an action the state of what it acts on forbids: why, and no button."""
    page = render_template(
        "admin/confirm.html", title=title, message=message, back=back, back_to=back_to, ask=False
    )
    return page, 409


def _admin() -> Caller:
    return Caller(g.admin.id, is_admin=True)


def _act(job_id: uuid.UUID, action: Callable[[], str]) -> WerkzeugResponse:
    """Run an operator action and flash its outcome (or why it was refused) on the job's page."""
    try:
        flash(action(), "ok")
    except ServiceError as refused:
        flash(refused.message, "error")
    job_reads.forget(job_id)
    return redirect(url_for("admin.job_page", job_id=job_id))


@bp.route("/jobs/<uuid:job_id>/cancel", methods=["GET", "POST"])
def cancel_job(job_id: uuid.UUID) -> Any:
    job = _job_or_404(job_id)
    if request.method == "GET" and job.is_final:
        return _refuse(
            "Cancel job", f"The job has already finished ({job.state}): there is nothing to cancel.", job_id
        )
    if request.method == "GET":
        return _confirm("Cancel job", f"Cancel {job.kind} job {job.id} ({job.state})?", job_id)

    def cancel() -> str:
        cancelled = job_service.cancel(context(), caller_of_session(), job_id)
        return f"cancel requested: the job is {cancelled.state}"

    return _act(job_id, cancel)


@bp.route("/jobs/<uuid:job_id>/retry", methods=["GET", "POST"])
@counts_as_submit()
def retry_job(job_id: uuid.UUID) -> Any:
    job = _job_or_404(job_id)
    if request.method == "GET" and job.state != JobState.FAILED:
        return _refuse("Retry job", f"Only a failed job can be retried; this one is {job.state}.", job_id)
    if request.method == "GET":
        message = f"Run failed {job.kind} job {job.id} again from the start (its shards and boards go)?"
        return _confirm("Retry job", message, job_id)

    def retry() -> str:
        job_service.retry(context(), _admin(), job_id)
        return "the job is queued again"

    return _act(job_id, retry)


SHARD_REQUEUE = f"/jobs/<uuid:job_id>/shards/<int(max={BIGINT_MAX}):shard_id>/requeue"


@bp.route(SHARD_REQUEUE, methods=["GET", "POST"])
def requeue_shard(job_id: uuid.UUID, shard_id: int) -> Any:
    job = _job_or_404(job_id)
    if request.method == "GET" and job.state != JobState.RUNNING:
        why = f"Only a shard of a running job can be requeued; this job is {job.state}."
        return _refuse("Requeue shard", why, job_id)
    if request.method == "GET":
        message = f"Requeue shard {shard_id}? A worker still running it stops without storing anything."
        return _confirm("Requeue shard", message, job_id)

    def requeue() -> str:
        job_service.requeue_shard(context(), _admin(), job_id, shard_id)
        return f"shard {shard_id} is queued again"

    return _act(job_id, requeue)
