"""The workers as readiness reads them: how long since any worker process last beat."""

from __future__ import annotations

from store import heartbeats
from store.db import Database


def newest_heartbeat_age(db: Database) -> float | None:
    """Seconds since the most recent heartbeat of any worker process; None if none ever beat."""
    with db.session() as session:
        return heartbeats.newest_heartbeat_age(session)
