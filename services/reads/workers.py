"""The workers as readiness and health checks read them: how long since any worker process last beat, and
how many of a host's beat now."""

from __future__ import annotations

from store import heartbeats
from store.db import Database


def newest_heartbeat_age(db: Database) -> float | None:
    """Seconds since the most recent heartbeat of any worker process; None if none ever beat."""
    with db.session() as session:
        return heartbeats.newest_heartbeat_age(session)


def alive_on_host(db: Database, hostname: str, within: float) -> int:
    """How many worker processes of `hostname` heartbeat in the last `within` seconds (a container's
    healthcheck: `zolve healthcheck worker`)."""
    with db.session() as session:
        return heartbeats.alive_on_host(session, hostname, within)
