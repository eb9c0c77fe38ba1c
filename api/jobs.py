"""/jobs: submit, poll (long-poll, ETag), list (keyset pages) and cancel puzzle jobs."""

from __future__ import annotations

import time
import uuid
from typing import Any, cast

from flask import Response, current_app, request, url_for
from flask.views import MethodView
from flask_smorest import abort
from marshmallow import RAISE

from api import job_reads
from api.auth import auth
from api.bodies import Blueprint
from api.deps import caller, context, database, settings
from api.errors import abort_with, run_again
from api.extension import zolve
from api.kind_filters import JobListQuery
from api.limits import checked_submit
from api.media import served_as
from api.resources import job_resource
from core import waiting
from schemas import jobs as job_schemas
from services import jobs as job_service
from services.context import Caller
from services.reads import jobs as stored_jobs
from services.reads.jobs import JobFilter, JobView

blp = Blueprint("jobs", __name__, url_prefix="/jobs", description="Puzzle jobs")


@blp.route("")
class JobCollection(MethodView):
    decorators = [auth.login_required]

    @blp.arguments(job_schemas.JobCreate)
    @blp.response(202, job_schemas.Job)
    @blp.alt_response(422, description="Unknown kind, bad params or a reused Idempotency-Key")
    @blp.alt_response(413, description="Request body too large")
    @blp.alt_response(415, description="The body is not sent as application/json")
    def post(self, body: dict[str, Any]) -> Any:
        """Submit a job. Answers 202 with the job and its Location; honours Idempotency-Key."""
        who = caller()
        # loaded once per request, maybe already for the submit limit's check
        checked = checked_submit()
        if checked is not None and (checked.kind, checked.raw_params) != (body["kind"], body["params"]):
            checked = None
        submitted = job_service.submit(
            context(),
            who,
            body["kind"],
            body["params"],
            loaded_params=checked.params if checked is not None else None,
            time_limit=body["time_limit"],
            fresh=body["fresh"],
            priority=body["priority"],
            queue_timeout=body["queue_timeout"],
            idempotency_key=request.headers.get("Idempotency-Key"),
            callback_url=body["callback_url"],
        )
        resource = job_resource(submitted.job, is_admin=who.is_admin)
        headers = {"Location": resource["links"]["self"]}
        if submitted.cache_hit:
            headers["X-Zolve-Cache"] = "hit"
        if not submitted.created:
            headers["Idempotent-Replayed"] = "true"
        return resource, 202, headers

    @blp.arguments(JobListQuery, location="query", unknown=RAISE)
    @blp.response(200, job_schemas.JobPage)
    def get(self, args: dict[str, Any]) -> Any:
        """Your jobs, newest first (admins: everyone's). Keyset pages: follow `next_cursor`."""
        who = caller()
        try:
            where = JobFilter(states=args["state"], kinds=args["kind"], owner_id=who.owner_filter)
            page = stored_jobs.find_jobs(database(), where, limit=args["limit"], cursor=args.get("cursor"))
        except ValueError:
            abort(422, errors={"cursor": ["not a cursor from this service"]})
        items = [job_resource(job, is_admin=who.is_admin) for job in page.items]
        headers = {}
        if page.next_cursor:
            query: dict[str, Any] = {**request.args.to_dict(flat=False), "cursor": page.next_cursor}
            next_url = url_for("jobs.JobCollection", **query)
            headers["Link"] = f'<{next_url}>; rel="next"'
        return {"items": items, "next_cursor": page.next_cursor}, 200, headers


@blp.route("/<uuid:job_id>")
class JobItem(MethodView):
    decorators = [auth.login_required]

    @blp.arguments(job_schemas.JobGetArgs, location="query", unknown=RAISE)
    @blp.response(200, job_schemas.Job)
    @blp.alt_response(404, description="No such job, or not yours")
    def get(self, args: dict[str, Any], job_id: uuid.UUID) -> Any:
        """A job's state, progress, timings and result. `?wait=N` blocks until it finishes (capped)."""
        who = caller()
        rerun = waiting.rerun_of(request.environ)
        if rerun is None:
            job = _wait_in_thread(job_id, who, args["wait"])
        elif (found := _wait_by_rerun(job_id, who, args["wait"], rerun)) is not None:
            job = found
        else:
            run_again()  # the edge runs this request again when the job moves
        # admins see more (a traceback), and the links are under the request's prefix (behind a proxy)
        view = (who.is_admin, request.script_root)
        answer = job_reads.rendered(job, view, lambda: _render(job, who.is_admin))
        # the client already holds this answer (compared weakly, as RFC 9110 has it: a proxy that
        # compresses marks the tag weak)
        if request.if_none_match.contains_weak(answer.digest):
            response = Response(status=304)
        else:
            response = Response(answer.body, mimetype="application/json")
        response.set_etag(answer.digest)
        if not job.is_final:
            response.headers["Retry-After"] = "1"
        return response


_JOB_SCHEMA = job_schemas.Job()


def _render(job: JobView, is_admin: bool) -> bytes:
    """The job as `@blp.response(200, Job)` would send it."""
    answer = current_app.json.response(_JOB_SCHEMA.dump(job_resource(job, is_admin=is_admin)))
    return cast(Response, answer).get_data()  # the app's response class; typed as the sans-IO base


#: a long-poll reads its job again at least this often, whatever the event feed says: a safety net only
#: (every final state records an event, which wakes the job's waits once it is visible, whatever ids before
#: it are still missing; a feed that lost its connection reads what it missed and wakes its waits when it is
#: back), so seldom: each look is a database read
WAIT_RECHECK_SECONDS = 10.0


def _wait_in_thread(job_id: uuid.UUID, who: Caller, wait: float) -> JobView:
    """The long-poll under a server other than the edge (Flask's test client, say): it holds its thread."""
    return waiting.in_thread(lambda rerun: _wait_by_rerun(job_id, who, wait, rerun))


def _wait_by_rerun(job_id: uuid.UUID, who: Caller, wait: float, rerun: waiting.Rerun) -> JobView | None:
    """The long-poll: the job once final or its wait over; else None, having asked the edge to run the
    request again at the job's next event (or after WAIT_RECHECK_SECONDS). Between runs it holds no thread
    and no database connection; its place and subscription last until the request ends."""
    deadline = rerun.arrived + min(wait, settings().max_wait_seconds)
    subscription = rerun.kept.get("subscription")
    if subscription is None:
        job = _visible(job_id, who, fresh=wait > 0)
        if job.is_final or time.monotonic() >= deadline or not _subscribed(job, who, rerun):
            return job
        subscription = rerun.kept["subscription"]
    subscription.woken.take()  # the read below sees every event that set it
    job = _visible(job_id, who, fresh=True)
    remaining = deadline - time.monotonic()
    if job.is_final or remaining <= 0:
        return job
    rerun.ask(subscription.woken, min(WAIT_RECHECK_SECONDS, remaining))
    return None


def _subscribed(job: JobView, who: Caller, rerun: waiting.Rerun) -> bool:
    """A place to wait (false: too many long-polls in this process, or of this key) and the job's
    wake-ups, kept by the request until it ends."""
    places, feed = zolve().waiting, zolve().events
    if not places.take(who.key_id):
        return False
    rerun.on_end(lambda: places.give_back(who.key_id))
    subscription = feed.subscribe(job.owner_id, job.id)
    rerun.on_end(lambda: feed.unsubscribe(subscription))
    rerun.kept["subscription"] = subscription
    return True


def _visible(job_id: uuid.UUID, who: Caller, fresh: bool) -> JobView:
    job = job_reads.visible_job(job_id, who, fresh=fresh)
    if job is None:
        abort_with(404, message="no such job")
    return job


@blp.route("/<uuid:job_id>/cancel", methods=["POST"], endpoint="cancel_job")
@auth.login_required
@blp.response(202, job_schemas.Job)
@blp.alt_response(404, description="No such job, or not yours")
@blp.alt_response(409, description="The job already finished")
def cancel_job(job_id: uuid.UUID) -> Any:
    """Cancel a job: a queued job never starts; a running one is interrupted within about a second."""
    who = caller()
    job = job_service.cancel(context(), who, job_id)
    job_reads.forget(job_id)
    return job_resource(job, is_admin=who.is_admin)


@blp.route("/<uuid:job_id>/result/items", endpoint="result_items")
@auth.login_required
@blp.arguments(job_schemas.ResultItemsArgs, location="query", unknown=RAISE)
@blp.response(200, job_schemas.ResultItemsPage)
@blp.alt_response(404, description="No such job, or not yours, or a result returned whole")
def result_items(args: dict[str, Any], job_id: uuid.UUID) -> Any:
    """The items of a result too large to return whole (e.g. every game of a big `mastermind.play`):
    the result says `paged: {field, count}`; follow `next_cursor`."""
    job = job_service.get(context(), caller(), job_id)
    if not (job.result or {}).get("paged"):
        abort(404, message="this job's result is returned whole, not paged")
    items, next_cursor = stored_jobs.result_items(database(), job.id, args.get("cursor", -1), args["limit"])
    return {"items": items, "next_cursor": next_cursor}


#: an SVG opened on its own is a document: it may load and run nothing (ours has no script; defence in depth)
PICTURE_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"}


@blp.route("/<uuid:job_id>/picture.svg", endpoint="picture")
@auth.login_required
@blp.response(
    200, {"type": "string"}, content_type="image/svg+xml", description="The result drawn as an SVG image"
)
@blp.alt_response(404, description="No such job, or not yours")
@blp.alt_response(409, description="The job has no result to draw: not yet, or it failed or was cancelled")
def picture(job_id: uuid.UUID) -> Any:
    """The result as a picture (SVG): a Planet X board's odds per sector, a Taiji grid with its lit tiles,
    a Mastermind game's pegs, a Leaving Earth route with its rockets, dice with their win matrix."""
    svg = job_service.picture(context(), caller(), job_id)
    return Response(svg, mimetype=served_as("image/svg+xml"), headers=PICTURE_HEADERS)
