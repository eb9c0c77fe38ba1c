"""API keys as the API's auth and the dashboard read them: the live key a token is, and a key by its id
(a dashboard session's)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from services.reads.copies import copied
from store import keys as key_store
from store.db import Database
from store.keys import hash_key
from store.models import ApiKey

__all__ = ["KeyView", "authenticate", "get_key", "hash_key", "key_view"]


@dataclass(frozen=True)
class KeyView:
    """A key as read, never its hash or its webhook secret."""

    id: int
    name: str
    prefix: str
    is_admin: bool
    created_at: datetime
    revoked_at: datetime | None
    session_generation: int
    weight: float
    max_in_flight: int | None


def key_view(key: ApiKey) -> KeyView:
    return copied(KeyView, key)


def authenticate(db: Database, token: str) -> KeyView | None:
    """The live (not revoked) key this token is, if any."""
    with db.session() as session:
        row = key_store.authenticate(session, token)
        return None if row is None else key_view(row)


def get_key(db: Database, key_id: int) -> KeyView | None:
    """The key, revoked or not."""
    with db.session() as session:
        row = key_store.get_key(session, key_id)
        return None if row is None else key_view(row)
