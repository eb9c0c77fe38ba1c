"""Fair release of queued work to the broker.

Queued jobs and shards wait in PostgreSQL ("held": `enqueued_at` NULL) and go to the broker a window at a
time per client (API key): a client has at most `window` jobs, and `window` shards, sent or running at
once. The broker's queue therefore interleaves clients (a client with 1,000 queued items holds at most a
window of places ahead of a newcomer), and each finished job or shard lets its client's next one go.

The window is the number of live worker processes that solve (webhook senders do not) plus one (at least
MIN_WINDOW), so that one client alone still keeps every process busy, scaled by the client's key's weight
(at least 1) and capped by the key's own `max_in_flight`. Two backlogged clients' messages then sit in the
broker's queue in the ratio of their windows, and the workers' time is shared between them in that ratio. A
client's held work goes highest `priority` first, then oldest. Releases of one client are serialised by a
transaction-level advisory lock of that client's (concurrent releasers never send more than its window);
releases of different clients never wait on each other. The sweeper releases every client's, taking their
locks in id order."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Integer,
    Interval,
    Select,
    Update,
    and_,
    bindparam,
    cast,
    func,
    or_,
    select,
    true,
    union,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql.selectable import Subquery

from core.states import JobState, ShardState
from store import heartbeats
from store.models import ApiKey, Job, Shard, Worker

MIN_WINDOW = 2
#: pg_advisory_xact_lock(RELEASE_LOCK, owner): "zolr", one lock per client (the two-key lock space is
#: apart from the one-key locks of retention and the sweeper)
RELEASE_LOCK = 0x7A6F_6C72
BATCH = 1000


@dataclass
class Released:
    jobs: list[uuid.UUID] = field(default_factory=list)
    shards: list[int] = field(default_factory=list)
    #: shards run before, whose worker died (not in `shards`): they go to the front of the broker's queue
    retried_shards: list[int] = field(default_factory=list)
    #: the released jobs' time limits (which lane each travels on: services.messages)
    time_limits: dict[uuid.UUID, float] = field(default_factory=dict)


def window(session: Session, alive_within: float) -> int:
    """Work one client may have sent or running at once, of each class (jobs, shards)."""
    alive = session.scalar(select(func.count()).where(_solving(alive_within)))
    return max(MIN_WINDOW, (alive or 0) + 1)


def _solving(within: float | ColumnElement[timedelta]) -> ColumnElement[bool]:
    """Live worker processes that run jobs and shards (a webhook sender runs neither)."""
    return and_(heartbeats.alive(within), Worker.solves.is_(True))


def _jobs_picked(owners: Subquery) -> Select[Any]:
    """For each client (a row of `owners`, with its window), its first held jobs (highest priority, then
    oldest) that fit what its window has left: a count of its sent or running jobs, then at most its
    window of its held rows read in order from their index (ix_jobs_held), however many it holds."""
    # a sharded job runs through its shards with no lease of its own: it holds no place in the window
    job = aliased(Job)
    sent = (
        select(func.count())
        .where(
            job.owner_id == owners.c.owner_id,
            or_(
                and_(job.state == JobState.QUEUED, job.enqueued_at.isnot(None)),
                and_(job.state.in_((JobState.RUNNING, JobState.CANCELLING)), job.lease_owner.isnot(None)),
            ),
        )
        .correlate(owners)
        .scalar_subquery()
    )
    held = (
        select(Job.id)
        .where(Job.owner_id == owners.c.owner_id, Job.state == JobState.QUEUED, Job.enqueued_at.is_(None))
        .order_by(Job.priority.desc(), Job.created_at, Job.id)
        .limit(func.greatest(owners.c.window - sent, 0))
        .lateral()
    )
    return select(held.c.id).select_from(owners.join(held, true())).limit(BATCH)


def _shards_picked(owners: Subquery) -> Select[Any]:
    """As _jobs_picked, for the held shards of each client's running jobs."""
    job, shard = aliased(Job), aliased(Shard)
    sent = (
        select(func.count())
        .select_from(shard)
        .join(job, job.id == shard.job_id)
        .where(
            job.owner_id == owners.c.owner_id,
            or_(
                and_(shard.state == ShardState.QUEUED, shard.enqueued_at.isnot(None)),
                shard.state == ShardState.RUNNING,
            ),
        )
        .correlate(owners)
        .scalar_subquery()
    )
    held = (
        select(Shard.id)
        .join(Job, Job.id == Shard.job_id)
        .where(
            Job.owner_id == owners.c.owner_id,
            Shard.state == ShardState.QUEUED,
            Shard.enqueued_at.is_(None),
            Job.state == JobState.RUNNING,
            Job.cancel_requested.is_(False),
        )
        # a shard interrupted by a dead worker goes first: the job waits on it
        .order_by(Shard.attempts == 0, Job.priority.desc(), Job.created_at, Shard.id)
        .limit(func.greatest(owners.c.window - sent, 0))
        .lateral()
    )
    return select(held.c.id).select_from(owners.join(held, true())).limit(BATCH)


_OWNERS = bindparam("owners", type_=ARRAY(BigInteger))
#: the window given (:window), or else (NULL) the one of `window()`, read in the release's own statement
_LIVE = select(func.count()).where(_solving(bindparam("alive_within", type_=Interval)))
_WINDOW = func.coalesce(
    bindparam("window", type_=Integer), func.greatest(MIN_WINDOW, _LIVE.scalar_subquery() + 1)
)


def _owner_windows(base: ColumnElement[int]) -> Subquery:
    """The clients `:owners`, each with its window: `base` times its key's weight (at least 1), at most
    its key's max_in_flight."""
    listed = select(func.unnest(_OWNERS).label("owner_id")).subquery("listed")
    weighted = func.greatest(1, func.round(base * ApiKey.weight))
    window = cast(func.least(weighted, ApiKey.max_in_flight), Integer)
    return (
        select(listed.c.owner_id, window.label("window"))
        .join_from(listed, ApiKey, ApiKey.id == listed.c.owner_id)
        .subquery("owners")
    )


@functools.cache
def _release_statement(table: str) -> Update:
    """The UPDATE that marks sent, and returns, the picked rows of `table` (jobs, shards) of the clients
    `:owners` with windows based on `:window` (NULL: live workers within `:alive_within`, plus one). Built
    once: composing it costs more than running it."""
    owners = _owner_windows(_WINDOW)
    if table == "jobs":
        picked = _jobs_picked(owners).cte("picked").prefix_with("MATERIALIZED")
        return (
            update(Job)
            .where(Job.id.in_(select(picked.c.id)), Job.enqueued_at.is_(None))
            .values(enqueued_at=func.now())
            .returning(Job.id, Job.time_limit)
        )
    picked = _shards_picked(owners).cte("picked").prefix_with("MATERIALIZED")
    return (
        update(Shard)
        .where(Shard.id.in_(select(picked.c.id)), Shard.enqueued_at.is_(None))
        .values(enqueued_at=func.now())
        .returning(Shard.id, Shard.attempts)
    )


def _holding(session: Session) -> list[int]:
    """The clients with held work (jobs, or shards of running jobs, never sent)."""
    jobs = select(Job.owner_id).where(Job.state == JobState.QUEUED, Job.enqueued_at.is_(None))
    shards = (
        select(Job.owner_id)
        .join(Shard, Shard.job_id == Job.id)
        .where(Shard.state == ShardState.QUEUED, Shard.enqueued_at.is_(None), Job.state == JobState.RUNNING)
    )
    return list(session.scalars(union(jobs, shards)))


def lock_owners(session: Session, owners: Collection[int] | None) -> list[int]:
    """Take the release locks of these clients (None: every client with held work) until the transaction
    ends, in id order so that two releasers never wait on each other crosswise; returns them. A submit
    takes its owner's at its start: a count of the owner's jobs after it sees every job a concurrent
    submit of that owner inserted, and its release needs no lock of its own."""
    locked = sorted(set(_holding(session) if owners is None else owners))
    if locked:
        session.execute(select(*(func.pg_advisory_xact_lock(RELEASE_LOCK, owner) for owner in locked)))
    return locked


def release(
    session: Session,
    window: int | None,
    owners: Collection[int] | None = None,
    *,
    shards: bool = True,
    alive_within: float | None = None,
    locked: bool = False,
) -> Released:
    """Mark sent, and return, the held work that fits each client's window (`owners`: only theirs;
    `shards=False`: their jobs only, e.g. after a submit, which changes nothing of their shards). The
    caller publishes it once this transaction commits. `window` None: `window(session, alive_within)`,
    read by the release's statement itself (no round trip of its own). `locked`: this transaction holds
    the `owners`' locks already (lock_owners).

    One statement per class: the picked ids are a materialised CTE, read once whatever plan the UPDATE
    gets (a planner without fresh statistics once ran a window query once per held row)."""
    owners = sorted(owners) if locked and owners is not None else lock_owners(session, owners)
    if not owners:
        return Released()
    if window is None and alive_within is None:
        raise ValueError("a release without a window needs alive_within")
    params = {"owners": owners, "window": window, "alive_within": timedelta(seconds=alive_within or 0)}
    options = {"synchronize_session": False}
    jobs = session.execute(_release_statement("jobs"), params, execution_options=options).all()
    released = Released(jobs=[job_id for job_id, _ in jobs], time_limits=dict(jobs))
    if not shards:
        return released
    shard_rows = session.execute(_release_statement("shards"), params, execution_options=options).all()
    released.shards = [shard_id for shard_id, attempts in shard_rows if not attempts]
    released.retried_shards = [shard_id for shard_id, attempts in shard_rows if attempts]
    return released
