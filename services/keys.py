"""API keys: create (shown once), list, revoke, and each key's share of the workers (its weight and its
cap of work in flight). The CLI's `zolve keys` and the dashboard's keys page call these."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy.orm import Session

from core.config import Settings
from migrations.runner import migrated
from services.errors import Invalid, NotFound
from services.reads.keys import KeyView, key_view
from store import keys as key_store
from store.db import Database
from store.models import ApiKey


@contextmanager
def _session(settings: Settings) -> Iterator[Session]:
    """A session on the configured database (migrated first), committed on success."""
    database_url = settings.require_database_url()
    with migrated(database_url) as db, db.session() as session:
        yield session


#: a key's weight: its share of the workers against other backlogged keys' (1: an equal share)
WEIGHT_RANGE = (0.01, 100.0)
#: a key's own cap on its work sent or running at once (more than any deployment runs; the column's
#: integer holds it)
MAX_IN_FLIGHT = 1_000_000


@dataclass(frozen=True)
class Share:
    weight: float = 1.0
    #: at most this many of its jobs (and of its shards) sent or running at once; None: the service's
    max_in_flight: int | None = None

    def checked(self) -> Share:
        """This share, or Invalid naming the field that is out of range."""
        low, high = WEIGHT_RANGE
        if not (math.isfinite(self.weight) and low <= self.weight <= high):
            raise Invalid({"weight": [f"must be from {low:g} to {high:g}"]})
        if self.max_in_flight is not None and not 1 <= self.max_in_flight <= MAX_IN_FLIGHT:
            bounds = f"must be from 1 to {MAX_IN_FLIGHT:,} (or none: the service's)"
            raise Invalid({"max_in_flight": [bounds]})
        return self


def create_key(
    settings: Settings, *, name: str, is_admin: bool, share: Share | None = None
) -> key_store.NewKey:
    share = (share or Share()).checked()
    with _session(settings) as session:
        return key_store.create_key(
            session, name=name, is_admin=is_admin, weight=share.weight, max_in_flight=share.max_in_flight
        )


def first_admin_key(db: Database) -> str | None:
    """A new deployment's admin key (its secret, shown once), unless it has an admin key already."""
    with db.session() as session:
        if key_store.has_admin(session):
            return None
        return key_store.create_key(session, name="admin (zolve up)", is_admin=True).key


def set_share(session: Session, key_id: int, share: Share) -> ApiKey:
    """Change the key's share in the caller's transaction (the CLI's, the dashboard's)."""
    share = share.checked()
    row = key_store.set_share(session, key_id, weight=share.weight, max_in_flight=share.max_in_flight)
    if row is None:
        raise NotFound(f"there is no key {key_id}: `zolve keys list` shows them")
    return row


def set_key_share(db: Database, key_id: int, share: Share) -> KeyView:
    """Change the key's share in a transaction of its own (the dashboard's keys page)."""
    with db.session() as session:
        return key_view(set_share(session, key_id, share))


def end_sessions(db: Database, key_id: int) -> None:
    """End every dashboard session of the key (its logout): the sessions signed in before are refused."""
    with db.session() as session:
        key_store.end_sessions(session, key_id)


def change_share(
    settings: Settings,
    key_id: int,
    *,
    weight: float | None = None,
    max_in_flight: int | None = None,
    drop_cap: bool = False,
) -> ApiKey:
    """Change what is given of the key's share (None: unchanged; `drop_cap`: no cap of its own)."""
    with _session(settings) as session:
        row = session.get(ApiKey, key_id)
        if row is None:
            raise NotFound(f"there is no key {key_id}: `zolve keys list` shows them")
        cap = None if drop_cap else (row.max_in_flight if max_in_flight is None else max_in_flight)
        return set_share(session, key_id, Share(row.weight if weight is None else weight, cap))


def list_keys(settings: Settings) -> list[ApiKey]:
    with _session(settings) as session:
        return key_store.list_keys(session)


def revoke_key(settings: Settings, key_id: int) -> ApiKey:
    with _session(settings) as session:
        row = key_store.revoke_key(session, key_id)
    if row is None:
        raise NotFound(f"there is no key {key_id}: `zolve keys list` shows them")
    return row
