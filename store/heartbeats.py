"""Worker processes announce themselves in the `workers` table: the dashboard's "workers alive"."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, func
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.models import Worker

#: rows of processes silent this long are deleted (pool processes are recycled often)
FORGET_AFTER = timedelta(days=1)


def beat(session: Session, hostname: str, pids: list[int], node: str | None = None) -> None:
    """Upsert one row per process (named `hostname:pid`, as its leases are) and forget long-dead ones."""
    if pids:
        rows = [{"name": f"{hostname}:{pid}", "hostname": hostname, "pid": pid, "node": node} for pid in pids]
        statement = insert(Worker).values(rows)
        session.execute(
            statement.on_conflict_do_update(
                index_elements=[Worker.name],
                set_={"heartbeat_at": func.now(), "node": statement.excluded.node},
            )
        )
    session.execute(delete(Worker).where(Worker.heartbeat_at < func.now() - FORGET_AFTER))
