"""Worker processes announce themselves in the `workers` table: the dashboard's "workers alive", the
fair-share window, and how the sweeper tells a dead process's leases from a live one's.

A process is named `host:pid:boot_id`, `boot_id` being random per start of its Celery worker: two workers
on one host, or a worker restarted with a recycled pid, never share a name. Each parent's heartbeat touches
only the rows of its own boot, in a fixed order, so concurrent heartbeats never deadlock."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from core.states import JobState, ShardState
from store.db import rowcount
from store.models import Job, Shard, Worker

#: rows of processes silent this long are deleted (pool processes are recycled often)
FORGET_AFTER = timedelta(days=1)


def process_name(hostname: str, pid: int, boot_id: str) -> str:
    """The name a worker process leases under (and its `workers` row's key)."""
    return f"{hostname}:{pid}:{boot_id}"


def stop(session: Session, boot_id: str) -> None:
    """A worker that shuts down: its processes of this boot are stopped now, not a lease of silence later."""
    session.execute(
        update(Worker)
        .where(Worker.boot_id == boot_id, Worker.stopped_at.is_(None))
        .values(stopped_at=func.now())
    )


def alive(within: float | ColumnElement[timedelta]) -> ColumnElement[bool]:
    """Workers rows of processes that heartbeat in the last `within` seconds (or interval: e.g. a bound
    parameter) and did not stop."""
    since = timedelta(seconds=within) if isinstance(within, int | float) else within
    return and_(Worker.heartbeat_at > func.now() - since, Worker.stopped_at.is_(None))


def _upsert(
    session: Session, hostname: str, pids: list[int], boot_id: str, node: str | None, solves: bool
) -> list[str]:
    ordered = sorted(pids)
    names = [process_name(hostname, pid, boot_id) for pid in ordered]
    rows = [
        {"name": name, "hostname": hostname, "pid": pid, "node": node, "boot_id": boot_id, "solves": solves}
        for name, pid in zip(names, ordered, strict=True)
    ]
    statement = insert(Worker).values(rows)
    session.execute(
        statement.on_conflict_do_update(
            index_elements=[Worker.name],
            set_={
                "heartbeat_at": func.now(),
                "stopped_at": None,
                "node": func.coalesce(statement.excluded.node, Worker.node),
            },
        )
    )
    return names


def register(session: Session, hostname: str, pid: int, boot_id: str, solves: bool = True) -> None:
    """A new pool process announces itself before it takes any work. `solves`: it runs jobs and shards
    (not only webhook deliveries)."""
    _upsert(session, hostname, [pid], boot_id, None, solves)


def beat(
    session: Session,
    hostname: str,
    pids: list[int],
    boot_id: str,
    node: str | None = None,
    solves: bool = True,
) -> None:
    """The parent's heartbeat: upsert a row per process in its pool, mark stopped the processes of its
    boot that left the pool (recycled or killed), and forget long-dead ones."""
    names = _upsert(session, hostname, pids, boot_id, node, solves) if pids else []
    session.execute(
        update(Worker)
        .where(Worker.boot_id == boot_id, Worker.stopped_at.is_(None), Worker.name.not_in(names))
        .values(stopped_at=func.now())
    )
    long_dead = (
        select(Worker.name)
        .where(Worker.heartbeat_at < func.now() - FORGET_AFTER)
        .with_for_update(skip_locked=True)
    )
    session.execute(delete(Worker).where(Worker.name.in_(long_dead)))


def expire_orphaned_leases(session: Session, alive_within: float, judge_silence: bool = True) -> int:
    """End the leases of processes known dead, so the sweep hands their work on at once instead of when
    the lease runs out: processes their parent saw leave its pool, and processes of a worker gone silent
    whose lease has not been renewed in `alive_within` either (a parent busy reconnecting to the broker
    stops beating, while its processes keep renewing their leases). A lease owner with no row at all is
    left to its lease: it may be a process that has not announced itself yet. Without `judge_silence`
    (the caller just got the database back), silent workers are left to their leases too."""
    silent = func.now() - timedelta(seconds=alive_within)
    stopped = select(Worker.name).where(Worker.stopped_at.isnot(None))
    gone_quiet = select(Worker.name).where(Worker.heartbeat_at <= silent)
    expired = 0
    for model, running in (
        (Job, Job.state.in_((JobState.RUNNING, JobState.CANCELLING))),
        (Shard, Shard.state == ShardState.RUNNING),
    ):
        orphaned: ColumnElement[bool] = model.lease_owner.in_(stopped)
        if judge_silence:
            quiet_lease = func.coalesce(model.heartbeat_at, silent) <= silent
            orphaned = or_(orphaned, and_(model.lease_owner.in_(gone_quiet), quiet_lease))
        # SKIP LOCKED: a row locked by a dead host's open transaction must never stall the sweep (the
        # server reaps that session within its TCP keepalive, see store.db)
        targets = (
            select(model.id)
            .where(running, orphaned, model.lease_expires_at > func.now())
            .with_for_update(skip_locked=True)
        )
        result = session.execute(
            update(model)
            .where(model.id.in_(targets))
            .values(lease_expires_at=func.now() - timedelta(seconds=1))
        )
        expired += rowcount(result)
    return expired


def alive_on_host(session: Session, hostname: str, within: float) -> int:
    """How many worker processes of `hostname` heartbeat in the last `within` seconds."""
    query = select(func.count()).select_from(Worker).where(Worker.hostname == hostname, alive(within))
    return int(session.scalar(query) or 0)


def newest_heartbeat_age(session: Session) -> float | None:
    """Seconds since the most recent heartbeat of any worker process; None if none ever beat."""
    age = session.scalar(select(func.extract("epoch", func.now() - func.max(Worker.heartbeat_at))))
    return None if age is None else float(age)
