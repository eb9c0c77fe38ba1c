"""Bearer API keys (Flask-HTTPAuth). The caller is the key: its id owns jobs."""

from __future__ import annotations

from flask import Response, request
from flask_httpauth import HTTPTokenAuth

from api.errors import error_response
from api.keycache import caller_for
from core.waiting import CLIENT_WEIGHT
from services.context import Caller

auth = HTTPTokenAuth(scheme="Bearer")


@auth.verify_token
def _verify(token: str) -> Caller | None:
    caller = caller_for(token)
    weigh = request.environ.get(CLIENT_WEIGHT)
    if caller is not None and weigh is not None:
        weigh(caller.weight)  # the edge's turns: this credential's share of the process's time
    return caller


@auth.error_handler
def _unauthorized(status: int) -> Response:
    return error_response(status, "a valid API key is required: Authorization: Bearer <key>")


def current_principal() -> Caller:
    principal: Caller | None = auth.current_user()
    assert principal is not None
    return principal
