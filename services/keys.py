"""API keys: create (shown once), list, revoke. The CLI's `zolve keys` calls these."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy.orm import Session

from core.config import Settings
from migrations.runner import migrated
from services.errors import NotFound
from store import keys as key_store
from store.models import ApiKey


@contextmanager
def _session(settings: Settings) -> Iterator[Session]:
    """A session on the configured database (migrated first), committed on success."""
    database_url, _ = settings.require_urls()
    with migrated(database_url) as db, db.session() as session:
        yield session


def create_key(settings: Settings, *, name: str, is_admin: bool) -> key_store.NewKey:
    with _session(settings) as session:
        return key_store.create_key(session, name=name, is_admin=is_admin)


def list_keys(settings: Settings) -> list[ApiKey]:
    with _session(settings) as session:
        return key_store.list_keys(session)


def revoke_key(settings: Settings, key_id: int) -> ApiKey:
    with _session(settings) as session:
        row = key_store.revoke_key(session, key_id)
    if row is None:
        raise NotFound(f"there is no key {key_id}: `zolve keys list` shows them")
    return row
