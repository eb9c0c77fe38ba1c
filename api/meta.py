"""Health, readiness and the list of puzzle kinds."""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask_smorest import Blueprint
from sqlalchemy import text

from api.errors import error_response
from schemas.jobs import Kind
from zolve.kinds import KINDS

blp = Blueprint("meta", __name__, description="Health and discovery")


@blp.route("/health")
@blp.doc(security=[])
@blp.response(200)
def health() -> Any:
    """Liveness: the process answers (touches nothing else)."""
    return {"status": "ok"}


@blp.route("/ready")
@blp.doc(security=[])
@blp.response(200)
@blp.alt_response(503, description="The database is unreachable")
def ready() -> Any:
    """Readiness: the database answers."""
    try:
        with current_app.extensions["zolve.db"].session() as session:
            session.execute(text("SELECT 1"))
    except Exception:
        return error_response(503, "the database is unavailable", headers={"Retry-After": "2"})
    return {"status": "ready"}


@blp.route("/kinds")
@blp.doc(security=[])
@blp.response(200, Kind(many=True))
def kinds() -> Any:
    """The puzzle kinds this service solves; each one's params are documented under components."""
    return [
        {"name": kind.name, "summary": kind.summary, "params_schema": kind.params_schema.__name__}
        for kind in KINDS.values()
    ]
