"""/jobs: submit, poll (long-poll, ETag), list (keyset pages) and cancel puzzle jobs."""

from __future__ import annotations

import logging
import time
import uuid
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any

from flask import current_app, request, url_for
from flask.views import MethodView
from flask_smorest import Blueprint, abort
from marshmallow import RAISE, ValidationError

from api.auth import Principal, auth, current_principal
from schemas import jobs as job_schemas
from store import jobs as job_store
from store.models import Job
from workers.publish import Messages, publish
from zolve.kinds import KINDS

log = logging.getLogger("zolve.api")
blp = Blueprint("jobs", __name__, url_prefix="/jobs", description="Puzzle jobs")

IDEMPOTENCY_KEY_MAX = 255


def _seconds(start: datetime | None, end: datetime | None) -> float | None:
    if start is None:
        return None
    return round(((end or datetime.now(UTC)) - start).total_seconds(), 3)


def progress_of(job: Job) -> dict[str, Any] | None:
    """Sharded jobs: shards done/total, rows so far, rows/s and an ETA from the shards' pace."""
    if not job.shards_total:
        return job.progress
    kind = KINDS.get(job.kind)
    noun = kind.rows_name if kind else "rows"
    elapsed = _seconds(job.started_at, job.finished_at) or 0.0
    progress = dict(job.progress or {})
    progress.update(
        {
            "shards_done": job.shards_done,
            "shards_total": job.shards_total,
            noun: job.rows_done,
            f"{noun}_per_second": round(job.rows_done / elapsed, 1) if elapsed else None,
            "eta_seconds": None,
        }
    )
    if not job.is_final and job.shards_done and elapsed:
        progress["eta_seconds"] = round(elapsed / job.shards_done * (job.shards_total - job.shards_done), 1)
    return progress


def job_links(job: Job) -> dict[str, str]:
    links = {
        "self": url_for("jobs.JobItem", job_id=job.id),
        "cancel": url_for("jobs.cancel_job", job_id=job.id),
    }
    kind = KINDS.get(job.kind)
    if kind and kind.has_rows:
        links["rows"] = url_for("boards.boards_page", job_id=job.id)
        links["ndjson"] = url_for("boards.boards_ndjson", job_id=job.id)
        links["csv"] = url_for("boards.boards_csv", job_id=job.id)
    return links


def job_error(job: Job, *, is_admin: bool) -> dict[str, Any] | None:
    """A job's error as its caller may see it: the traceback is for admins only."""
    error = dict(job.error) if job.error else None
    if error and not is_admin:
        error.pop("traceback", None)
    return error


def job_resource(job: Job, *, is_admin: bool) -> dict[str, Any]:
    error = job_error(job, is_admin=is_admin)
    return {
        "id": job.id,
        "kind": job.kind,
        "state": job.state,
        "params": job.params,
        "time_limit": job.time_limit,
        "progress": progress_of(job),
        "result": job.result,
        "error": error,
        "attempts": job.attempts,
        "cancel_requested": job.cancel_requested,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "queued_seconds": _seconds(job.created_at, job.started_at),
        "run_seconds": _seconds(job.started_at, job.finished_at),
        "links": job_links(job),
    }


#: jobs served from memory, per app: finished ones for FINAL_CACHE_SECONDS, unfinished ones for
#: ZOLVE_STATUS_CACHE_SECONDS, so that many clients polling a running job cost a few queries a second
STATUS_CACHE_SIZE = 4096
#: a finished job changes again only when an operator retries it from the dashboard
FINAL_CACHE_SECONDS = 60.0


def _job_for(job_id: uuid.UUID, principal: Principal, fresh: bool = False) -> Job | None:
    """The job if this caller may see it; `fresh` reads the database whatever the cache holds."""
    cache: OrderedDict[uuid.UUID, tuple[Job, float]] = current_app.extensions.setdefault(
        "zolve.status_cache", OrderedDict()
    )
    now = time.monotonic()
    entry = None if fresh else cache.get(job_id)
    if entry is not None and entry[1] > now:
        job = entry[0]
    else:
        with database().session() as session:
            job = job_store.get_job(session, job_id, None)
        if job is not None:
            ttl = FINAL_CACHE_SECONDS if job.is_final else _settings().status_cache_seconds
            cache[job_id] = (job, now + ttl)
            while len(cache) > STATUS_CACHE_SIZE:
                cache.popitem(last=False)
    if job is None or principal.owner_filter not in (None, job.owner_id):
        return None
    return job


def forget_status(job_id: uuid.UUID) -> None:
    current_app.extensions.get("zolve.status_cache", {}).pop(job_id, None)


def database():
    return current_app.extensions["zolve.db"]


def _settings():
    return current_app.extensions["zolve.settings"]


def _validated_params(kind_name: str, params: dict[str, Any]) -> dict[str, Any]:
    kind = KINDS.get(kind_name)
    if kind is None:
        abort(422, errors={"kind": [f"unknown kind; one of: {', '.join(sorted(KINDS))}"]})
    try:
        return kind.load_params(params)
    except ValidationError as err:
        abort(422, errors={"params": err.messages})


def checked_time_limit(requested: float | None) -> float:
    settings = _settings()
    if requested is None:
        return settings.default_time_limit
    if requested > settings.max_time_limit:
        abort(422, errors={"time_limit": [f"must be at most {settings.max_time_limit:g} seconds"]})
    return requested


def _idempotency_key() -> str | None:
    key = request.headers.get("Idempotency-Key")
    if key is not None and not (0 < len(key) <= IDEMPOTENCY_KEY_MAX):
        abort(422, errors={"Idempotency-Key": [f"must be 1 to {IDEMPOTENCY_KEY_MAX} characters"]})
    return key


def publish_job(job_id: uuid.UUID) -> None:
    """Wake a worker. If the broker is down the job stays queued and the sweeper publishes it later."""
    publish(current_app.extensions["zolve.celery"], database(), Messages(jobs=[job_id]))


@blp.route("")
class JobCollection(MethodView):
    decorators = [auth.login_required]

    @blp.arguments(job_schemas.JobCreate)
    @blp.response(202, job_schemas.Job)
    @blp.alt_response(422, description="Unknown kind, bad params or a reused Idempotency-Key")
    @blp.alt_response(413, description="Request body too large")
    def post(self, body: dict[str, Any]) -> Any:
        """Submit a job. Answers 202 with the job and its Location; honours Idempotency-Key."""
        principal = current_principal()
        params = _validated_params(body["kind"], body["params"])
        time_limit = checked_time_limit(body["time_limit"])
        key = _idempotency_key()
        with database().session() as session:
            cached = None
            if KINDS[body["kind"]].cacheable and not body["fresh"] and key is None:
                cached = job_store.create_cached_job(
                    session,
                    owner_id=principal.key_id,
                    kind=body["kind"],
                    params=params,
                    time_limit=time_limit,
                )
            if cached is not None:
                resource = job_resource(cached, is_admin=principal.is_admin)
                return resource, 202, {"Location": resource["links"]["self"], "X-Zolve-Cache": "hit"}
            try:
                job, created = job_store.create_job(
                    session,
                    owner_id=principal.key_id,
                    kind=body["kind"],
                    params=params,
                    time_limit=time_limit,
                    idempotency_key=key,
                )
            except job_store.IdempotencyConflict as conflict:
                abort(422, message=str(conflict), errors={"Idempotency-Key": [str(conflict)]})
            resource = job_resource(job, is_admin=principal.is_admin)
        if created:
            publish_job(job.id)
        headers = {"Location": resource["links"]["self"]}
        if not created:
            headers["Idempotent-Replayed"] = "true"
        return resource, 202, headers

    @blp.arguments(job_schemas.JobListArgs, location="query", unknown=RAISE)
    @blp.response(200, job_schemas.JobPage)
    def get(self, args: dict[str, Any]) -> Any:
        """Your jobs, newest first (admins: everyone's). Keyset pages: follow `next_cursor`."""
        principal = current_principal()
        with database().session() as session:
            try:
                page = job_store.list_jobs(
                    session,
                    owner_id=principal.owner_filter,
                    states=args.get("state"),
                    kind=args.get("kind"),
                    limit=args["limit"],
                    cursor=args.get("cursor"),
                )
            except ValueError:
                abort(422, errors={"cursor": ["not a cursor from this service"]})
            items = [job_resource(job, is_admin=principal.is_admin) for job in page.items]
        headers = {}
        if page.next_cursor:
            next_url = url_for("jobs.JobCollection", **{**request.args, "cursor": page.next_cursor})
            headers["Link"] = f'<{next_url}>; rel="next"'
        return {"items": items, "next_cursor": page.next_cursor}, 200, headers


@blp.route("/<uuid:job_id>")
class JobItem(MethodView):
    decorators = [auth.login_required]

    @blp.etag
    @blp.arguments(job_schemas.JobGetArgs, location="query", unknown=RAISE)
    @blp.response(200, job_schemas.Job)
    @blp.alt_response(404, description="No such job, or not yours")
    def get(self, args: dict[str, Any], job_id: uuid.UUID) -> Any:
        """A job's state, progress, timings and result. `?wait=N` blocks until it finishes (capped)."""
        principal = current_principal()
        deadline = time.monotonic() + min(args["wait"], _settings().max_wait_seconds)
        pause = 0.02  # back off from 20 ms to 250 ms: quick jobs answer fast, slow ones cost few queries
        while True:
            job = _job_for(job_id, principal, fresh=args["wait"] > 0)
            if job is None:
                abort(404, message="no such job")
            if job.is_final or time.monotonic() >= deadline:
                break
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 1.5, 0.25)
        headers = {} if job.is_final else {"Retry-After": "1"}
        return job_resource(job, is_admin=principal.is_admin), 200, headers


@blp.route("/<uuid:job_id>/cancel", methods=["POST"], endpoint="cancel_job")
@auth.login_required
@blp.response(202, job_schemas.Job)
@blp.alt_response(404, description="No such job, or not yours")
@blp.alt_response(409, description="The job already finished")
def cancel_job(job_id: uuid.UUID) -> Any:
    """Cancel a job: a queued job never starts; a running one is interrupted within about a second."""
    principal = current_principal()
    with database().session() as session:
        job = job_store.get_job(session, job_id, principal.owner_filter)
        if job is None:
            abort(404, message="no such job")
        if job.state in ("succeeded", "failed"):
            abort(409, message=f"the job already {job.state}")
        job = job_store.request_cancel(session, job, actor_key_id=principal.key_id)
        resource = job_resource(job, is_admin=principal.is_admin)
    forget_status(job_id)
    return resource
