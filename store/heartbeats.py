"""Worker processes announce themselves in the `workers` table: the dashboard's "workers alive"."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from store.models import Worker

#: rows of processes silent this long are deleted (pool processes are recycled often)
FORGET_AFTER = timedelta(days=1)


def beat(session: Session, hostname: str, pids: list[int], node: str | None = None) -> None:
    """Upsert one row per process (named `hostname:pid`, as its leases are), drop the node's processes
    that left its pool (recycled), and forget long-dead ones."""
    names = [f"{hostname}:{pid}" for pid in pids]
    if node is not None:
        session.execute(
            delete(Worker).where(Worker.hostname == hostname, Worker.node == node, Worker.name.not_in(names))
        )
    if pids:
        rows = [
            {"name": name, "hostname": hostname, "pid": pid, "node": node}
            for name, pid in zip(names, pids, strict=True)
        ]
        statement = insert(Worker).values(rows)
        session.execute(
            statement.on_conflict_do_update(
                index_elements=[Worker.name],
                set_={"heartbeat_at": func.now(), "node": statement.excluded.node},
            )
        )
    session.execute(delete(Worker).where(Worker.heartbeat_at < func.now() - FORGET_AFTER))


def newest_heartbeat_age(session: Session) -> float | None:
    """Seconds since the most recent heartbeat of any worker process; None if none ever beat."""
    age = session.scalar(select(func.extract("epoch", func.now() - func.max(Worker.heartbeat_at))))
    return None if age is None else float(age)
