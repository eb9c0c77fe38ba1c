"""Health, readiness and the list of puzzle kinds."""

from __future__ import annotations

from typing import Any

import redis
from flask import jsonify

from api.bodies import Blueprint
from api.extension import zolve
from api.limits import storage_uri
from api.openapi import kind_create_schema, kind_job_schema
from core.version import VERSION
from kinds import KINDS
from schemas.meta import Health, Kind, NotReady, Ready
from services.reads import workers

blp = Blueprint("meta", __name__, description="Health and discovery")


@blp.route("/health")
@blp.doc(security=[])
@blp.response(200, Health)
def health() -> Any:
    """Liveness: the process answers (touches nothing else), with the version it runs."""
    return {"status": "ok", "version": VERSION}


@blp.route("/ready")
@blp.doc(security=[])
@blp.response(200, Ready)
@blp.alt_response(503, schema=NotReady, description="Not ready: `reasons` says what is missing")
def ready() -> Any:
    """Readiness: the database answers, the broker answers, and a worker has heartbeated within a
    lease (else jobs would be accepted that nothing runs)."""
    reasons = _unready_reasons()
    if reasons:
        body = {"code": 503, "status": "unavailable", "message": "; ".join(reasons.values())}
        # a response of its own: the 200's schema (Ready) would drop all but `status`
        unready = jsonify({**body, "reasons": reasons})
        unready.status_code, unready.headers["Retry-After"] = 503, "2"
        return unready
    return {"status": "ready"}


def _unready_reasons() -> dict[str, str]:
    settings = zolve().settings
    try:
        newest = workers.newest_heartbeat_age(zolve().db)
    except Exception:
        return {"database": "the database is unavailable"}
    reasons = {}
    if settings.redis_url is None or not broker_answers(settings.redis_url):
        reasons["broker"] = "the broker (Redis) is unreachable"
    if newest is None:
        reasons["workers"] = "no worker has ever heartbeated"
    elif newest > settings.lease_seconds:
        reasons["workers"] = f"no worker has heartbeated in the last {settings.lease_seconds:g} s"
    return reasons


def broker_answers(redis_url: str) -> bool:
    client = redis.Redis.from_url(storage_uri(redis_url).replace("redis+unix://", "unix://", 1), **_QUICK)
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


_QUICK = {"socket_connect_timeout": 1, "socket_timeout": 1}


@blp.route("/kinds")
@blp.doc(security=[])
@blp.response(200, Kind(many=True))
def kinds() -> Any:
    """The puzzle kinds this service solves; each one's params are documented under components."""
    return [
        {
            "name": kind.name,
            "summary": kind.summary,
            "params_schema": kind.params_schema.__name__,
            "result_schema": kind.result_schema.__name__,
            "job_schema": kind_job_schema(kind.name),
            "create_schema": kind_create_schema(kind.name),
            "rows": kind.rows.name if kind.rows else None,
            "example": kind.example_params(),
        }
        for kind in KINDS.values()
    ]
