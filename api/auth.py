"""Bearer API keys (Flask-HTTPAuth). The caller is the key: its id owns jobs."""

from __future__ import annotations

from flask import Response
from flask_httpauth import HTTPTokenAuth

from api.errors import error_response
from api.keycache import caller_for
from services.context import Caller

auth = HTTPTokenAuth(scheme="Bearer")


@auth.verify_token
def _verify(token: str) -> Caller | None:
    return caller_for(token)


@auth.error_handler
def _unauthorized(status: int) -> Response:
    return error_response(status, "a valid API key is required: Authorization: Bearer <key>")


def current_principal() -> Caller:
    principal: Caller | None = auth.current_user()
    assert principal is not None
    return principal
