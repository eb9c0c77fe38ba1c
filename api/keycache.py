"""API keys verified once and remembered for a few seconds per app, for the auth check and the rate
limiter alike: a poll costs no key lookup, and a revoked key stops working within CACHE_SECONDS. The
cache is a bounded TTL cache (least recently used out first), so a flood of unknown tokens cannot evict
the keys in use wholesale."""

from __future__ import annotations

import threading
from typing import cast

from cachetools import TTLCache

from api.extension import zolve
from services.context import Caller
from services.reads import keys

CACHE_SECONDS = 10.0
CACHE_SIZE = 10_000
MAX_TOKEN = 200
_MISSING = object()


def caller_for(token: str) -> Caller | None:
    """The key's caller, or None for a token that is no (live) key; unknown tokens are remembered too."""
    if not token or len(token) > MAX_TOKEN:
        return None
    digest = keys.hash_key(token)
    cache, lock = _cache()
    with lock:
        cached = cache.get(digest, _MISSING)
    if cached is not _MISSING:
        return cast("Caller | None", cached)
    key = keys.authenticate(zolve().db, token)
    caller = Caller(key.id, key.is_admin, key.weight) if key else None
    with lock:
        cache[digest] = caller
    return caller


def new_auth_cache() -> tuple[TTLCache[str, Caller | None], threading.Lock]:
    return TTLCache(CACHE_SIZE, CACHE_SECONDS), threading.Lock()


def _cache() -> tuple[TTLCache[str, Caller | None], threading.Lock]:
    return zolve().auth_cache
