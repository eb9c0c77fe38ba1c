"""Bearer API keys (Flask-HTTPAuth). The caller is the key: its id owns jobs."""

from __future__ import annotations

import time

from flask import current_app
from flask_httpauth import HTTPTokenAuth

from api.errors import error_response
from services.context import Caller
from store import keys

auth = HTTPTokenAuth(scheme="Bearer")


#: per app, key hash → (principal or None, expiry): a poll costs no key lookup; a revoked key stops working
#: within AUTH_CACHE_SECONDS
AUTH_CACHE_SECONDS = 10.0
_AUTH_CACHE_SIZE = 10_000


@auth.verify_token
def _verify(token: str) -> Caller | None:
    if not token or len(token) > 200:
        return None
    digest = keys.hash_key(token)
    recent = current_app.extensions.setdefault("zolve.auth_cache", {})
    cached = recent.get(digest)
    if cached is not None and cached[1] > time.monotonic():
        return cached[0]
    with current_app.extensions["zolve.db"].session() as session:
        row = keys.authenticate(session, token)
        principal = Caller(row.id, row.is_admin) if row else None
    if len(recent) >= _AUTH_CACHE_SIZE:
        recent.clear()
    recent[digest] = (principal, time.monotonic() + AUTH_CACHE_SECONDS)
    return principal


@auth.error_handler
def _unauthorized(status: int):
    return error_response(status, "a valid API key is required: Authorization: Bearer <key>")


def current_principal() -> Caller:
    principal = auth.current_user()
    assert principal is not None
    return principal
