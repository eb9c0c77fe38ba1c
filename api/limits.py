"""Per-client rate limits, counted in Redis so that every API process shares them: every request draws on
the client's request budget (api.request_budget, reserved from Redis in batches), and submits on a tighter
one (Flask-Limiter, a Redis round trip per submit).

A client is its API key (by id: no secret ends up in Redis) or, without a valid one, its address: a
flood of random tokens shares its address's budget instead of opening a bucket per token. Submits have a
tighter budget that `POST /batches` draws on item by item; a submit that is refused as invalid (its body,
or a job's params) is checked before the budget, so it is its `422`, never a `429`, and costs nothing, as
does an Idempotency-Key's replay (no new job). The
submit budget is a moving window whose check and charge are one step in Redis: concurrent submits cannot
all pass a check that none has paid for yet, and one refused for want of budget costs nothing.
A long-poll is one request however often the edge runs it again to look.
Over the limit: `429` with `Retry-After`. If Redis is away, counting falls back to each process's memory
rather than failing requests: a broker outage must not stop `POST /jobs` from answering `202`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import flask_limiter
from flask import Flask, g, request, session
from flask_limiter import Limiter
from flask_smorest import abort
from limits import parse_many
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from api.deps import context
from api.keycache import caller_for
from api.request_budget import RequestBudget
from core.config import Settings
from core.waiting import rerun_of
from schemas.batches import BatchCreate
from schemas.jobs import JobCreate
from services.errors import Invalid
from services.jobs import idempotency_key_used, kind_named, validated_params

log = logging.getLogger("zolve.api")

#: never limited: probes, the spec and its UI
EXEMPT = (
    "meta.health",
    "meta.ready",
    "api-docs.openapi_json",
    "api-docs.openapi_swagger_ui",
    "swagger_assets",
    "favicon",
)


#: marks a request the request budget has charged: the edge's reruns of it (a long-poll waking to look
#: again, core.waiting) are one request to its client, and cost nothing more
CHARGED = "zolve.budget_charged"


def exempt() -> bool:
    """Probes and the spec; and the dashboard of an operator signed in with an admin key (its pages poll;
    the session cookie is signed, so only an admin's login says so). A client key's session draws on its
    key's budget, as its Bearer requests do."""
    return request.endpoint in EXEMPT or ("admin" in request.blueprints and session.get("admin") is True)


def client_key() -> str:
    """A key this process has verified recently counts as itself, and so does a dashboard session (its
    cookie is signed: the key it names signed in); anything else (no key, or a token not yet verified,
    e.g. one of a flood of random `zk_...` tokens) counts against its address, so that unknown tokens
    cannot each open a fresh bucket."""
    key_id = requesting_key_id()
    return f"key:{key_id}" if key_id is not None else "ip:" + (request.remote_addr or "unknown")


def requesting_key_id() -> int | None:
    """The key this request is sent with, as client_key counts it: a Bearer token this process verified
    recently, or a dashboard session's; None for anything else."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    caller = caller_for(token) if scheme.lower() == "bearer" else None
    if caller is not None:
        return caller.key_id
    if "admin" in request.blueprints and isinstance(session.get("key_id"), int):
        return int(session["key_id"])
    return None


def storage_uri(redis_url: str) -> str:
    """The `limits` library's name for the broker's Redis (it spells unix sockets `redis+unix`)."""
    if redis_url.startswith("redis+socket://"):
        return "redis+unix://" + redis_url.removeprefix("redis+socket://")
    return redis_url


def init_budget(app: Flask, settings: Settings) -> RequestBudget | None:
    """Every request not exempt draws on its client's budget; over it: 429 with Retry-After."""
    if not settings.rate_limit:
        return None
    budget = RequestBudget(settings.rate_limit, storage_uri(settings.redis_url or "memory://"))

    @app.before_request
    def _spend() -> None:
        rerun = rerun_of(request.environ)
        if exempt() or (rerun is not None and rerun.kept.get(CHARGED)):
            return
        if not budget.allow(client_key()):
            abort(
                429,
                message=f"too many requests: at most {budget.limit} per client",
                headers={"Retry-After": str(budget.seconds_left())},
            )
        if rerun is not None:
            rerun.kept[CHARGED] = True

    return budget


def init_limits(app: Flask, settings: Settings) -> Limiter:
    init_budget(app, settings)
    limiter = Limiter(
        client_key,
        app=app,
        storage_uri=storage_uri(settings.redis_url or "memory://"),
        strategy="moving-window",  # checked and charged at once (see the module's doc)
        # X-RateLimit-* headers would cost two more Redis round trips per request; a 429 says
        # Retry-After (api.errors.seconds_until_reset)
        headers_enabled=False,
        swallow_errors=True,
        in_memory_fallback_enabled=True,
        key_prefix="zolve",
    )
    if settings.submit_rate_limit:
        _limit_submits(app, limiter, settings.submit_rate_limit)
    _drop_request_hook(app, limiter)
    return limiter


def _limit_submits(app: Flask, limiter: Limiter, rate: str) -> None:
    """POST /jobs, POST /batches and the dashboard's ways to make work draw on one submit budget."""

    def submit_limit(exempt_when: Callable[[], bool], cost: Callable[[], int] | int = 1) -> Decorator:
        # charged as the request comes: charged only once answered, concurrent submits would all pass
        return limiter.shared_limit(
            rate,
            scope="submit",
            methods=["POST"],
            exempt_when=exempt_when,
            cost=cost,
            error_message=said,
        )

    said = (
        f"too many submits for this key: at most {rate} (a batch counts each item); retry after Retry-After"
    )

    # a batch counts as many submits as it has items; one larger than the whole budget costs the whole
    # budget (else it could never pass)
    budget = min(item.amount for item in parse_many(rate))
    views = app.view_functions
    views["batches.BatchCollection"] = submit_limit(
        lambda: invalid_batch() or free_submit(batch=True), lambda: min(batch_items(), budget)
    )(views["batches.BatchCollection"])
    views["jobs.JobCollection"] = submit_limit(lambda: invalid_job() or free_submit(batch=False))(
        views["jobs.JobCollection"]
    )
    for endpoint, view in list(views.items()):
        if (free_when := getattr(view, SUBMIT_MARK, None)) is not None:
            views[endpoint] = submit_limit(_or_free(free_when))(view)


def _or_free(free_when: Callable[[], bool]) -> Callable[[], bool]:
    return lambda: free_when() or free_submit(batch=False)


def free_submit(*, batch: bool) -> bool:
    """An Idempotency-Key's replay makes no new job: it costs nothing (a client retrying after a dropped
    answer is not charged twice). Only a submit with that header asks the database (the key as
    client_key finds it: this runs before the view's auth); others keep their statements."""
    key = request.headers.get("Idempotency-Key")
    key_id = requesting_key_id() if key else None
    if key is None or key_id is None:
        return False
    try:
        return idempotency_key_used(context(), key_id, key, batch=batch)
    except (DBAPIError, PoolTimeout):  # charged: Flask-Limiter would take an error here for Redis's
        return False


#: Flask-Limiter releases whose hook before every request (`Limiter._check_request_limit`) applies only
#: default and application-wide limits, as tests/api/test_limits.py checks on the installed one
HOOK_CHECKS_ONLY_APP_LIMITS = SpecifierSet(">=3.5,<4.2")


def _drop_request_hook(app: Flask, limiter: Limiter) -> None:
    """The decorated limits (the submit budget) are checked by the decorated views themselves; the hook
    before every request applies only default and application-wide limits, which this app has none of (the
    request budget replaced them), which resolves limits on every request for nothing. It is a private part
    of Flask-Limiter: dropped only on the releases known to work so, else kept (correct, only slower)."""
    if Version(flask_limiter.__version__) not in HOOK_CHECKS_ONLY_APP_LIMITS:
        log.warning("Flask-Limiter %s is untested here: its hook is kept", flask_limiter.__version__)
        return
    app.before_request_funcs[None].remove(limiter._check_request_limit)


SUBMIT_MARK = "zolve_submit_free_when"
View = TypeVar("View", bound=Callable[..., Any])
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def counts_as_submit(free_when: Callable[[], bool] = lambda: False) -> Callable[[View], View]:
    """Marks a dashboard view whose POST submits (or re-runs) a job: it draws on the key's submit budget,
    as POST /jobs does, unless `free_when()` says this request makes no job (a form its schema refuses
    answers 422, free, as `invalid_job`). Put it under the route decorator."""

    def mark(view: View) -> View:
        setattr(view, SUBMIT_MARK, free_when)
        return view

    return mark


def invalid_form() -> bool:
    """The new-job form as `POST /jobs` would read it (the view's own reading: api.admin.pages)."""
    try:
        params = json.loads(request.form.get("params") or "{}")
        limit = request.form.get("time_limit", "").strip()
        body = {"kind": (request.view_args or {}).get("kind_name"), "params": params}
        if limit:
            body["time_limit"] = json.loads(limit)
    except (ValueError, RecursionError):
        return True
    return _refused(body)


def _refused(body: object) -> bool:
    return _checked(body) is None


def _checked_body(body: object) -> CheckedSubmit | None:
    params = _checked(body)
    if params is None or not isinstance(body, dict):
        return None
    return CheckedSubmit(body["kind"], body.get("params", {}), params)


def _checked(body: object) -> dict[str, Any] | None:
    """The job's params as its kind loads them, or None when the schema or the kind refuses the body."""
    if not isinstance(body, dict) or JobCreate().validate(body):
        return None
    try:
        return validated_params(kind_named(body["kind"]), body.get("params", {}))
    except Invalid:
        return None


class CheckedSubmit(NamedTuple):
    kind: str
    raw_params: Any
    params: dict[str, Any]


#: flask.g's name for this request's checked submit (checked_submit)
_CHECKED = "zolve_checked_submit"


def checked_submit() -> CheckedSubmit | None:
    """This request's POST /jobs body as its kind loads it, or None when its schema or its kind refuses
    it; worked out once per request, by whichever asks first: the submit limit (a refused submit is free)
    or the view (which then does not load the params again)."""
    if _CHECKED not in g:
        setattr(g, _CHECKED, _checked_body(request.get_json(silent=True)))
    checked: CheckedSubmit | None = getattr(g, _CHECKED)
    return checked


def invalid_job() -> bool:
    """A POST /jobs its schema or its kind refuses: the view answers 422 (and it costs nothing)."""
    return checked_submit() is None


def invalid_batch() -> bool:
    """A POST /batches its schema refuses (e.g. over 500 items): the view answers 422. A bad item's params
    are not: the batch is accepted with that item rejected."""
    body = request.get_json(silent=True)
    return not isinstance(body, dict) or bool(BatchCreate().validate(body))


def batch_items() -> int:
    """How many items a POST /batches holds (at least 1; the schema refuses bad bodies after this)."""
    body = request.get_json(silent=True)
    items = body.get("items") if isinstance(body, dict) else None
    return max(1, len(items)) if isinstance(items, list) else 1
