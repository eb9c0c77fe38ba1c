"""API keys verified once and remembered for a few seconds per app, for the auth check and the rate
limiter alike: a poll costs no key lookup, and a revoked key stops working within CACHE_SECONDS."""

from __future__ import annotations

import time

from flask import current_app

from services.context import Caller
from store import keys

CACHE_SECONDS = 10.0
_CACHE_SIZE = 10_000
MAX_TOKEN = 200


def caller_for(token: str) -> Caller | None:
    """The key's caller, or None for a token that is no (live) key; unknown tokens are remembered too."""
    if not token or len(token) > MAX_TOKEN:
        return None
    digest = keys.hash_key(token)
    recent = current_app.extensions.setdefault("zolve.auth_cache", {})
    cached = recent.get(digest)
    if cached is not None and cached[1] > time.monotonic():
        return cached[0]
    with current_app.extensions["zolve.db"].session() as session:
        row = keys.authenticate(session, token)
        caller = Caller(row.id, row.is_admin) if row else None
    if len(recent) >= _CACHE_SIZE:
        recent.clear()
    recent[digest] = (caller, time.monotonic() + CACHE_SECONDS)
    return caller
