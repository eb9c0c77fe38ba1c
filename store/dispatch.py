"""Fair release of queued work to the broker.

Queued jobs and shards wait in PostgreSQL ("held": `enqueued_at` NULL) and go to the broker a window at a
time per client (API key): a client has at most `window` jobs, and `window` shards, sent or running at
once. The broker's queue therefore interleaves clients (a client with 1,000 queued items holds at most a
window of places ahead of a newcomer), and each finished job or shard lets its client's next one go.

The window is the number of live worker processes plus one (at least MIN_WINDOW), so that one client alone
still keeps every process busy. Releases of one client are serialised by a transaction-level advisory lock
of that client's (concurrent releasers never send more than its window); releases of different clients
never wait on each other. The sweeper releases every client's, taking their locks in id order."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, Select, and_, func, or_, select, union, update
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import Subquery

from core.states import JobState, ShardState
from store import heartbeats
from store.models import Job, Shard

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


def window(session: Session, alive_within: float) -> int:
    """Work one client may have sent or running at once, of each class (jobs, shards)."""
    alive = session.scalar(select(func.count()).where(heartbeats.alive(alive_within)))
    return max(MIN_WINDOW, (alive or 0) + 1)


def _owners(column: ColumnElement, owners: Collection[int] | None) -> list[ColumnElement[bool]]:
    return [] if owners is None else [column.in_(list(owners))]


def _jobs_to_release(owners: Collection[int] | None) -> tuple[Select, Subquery]:
    # a sharded job runs through its shards with no lease of its own: it holds no place in the window
    in_flight = (
        select(Job.owner_id, func.count().label("n"))
        .where(
            or_(
                and_(Job.state == JobState.QUEUED, Job.enqueued_at.isnot(None)),
                and_(Job.state.in_((JobState.RUNNING, JobState.CANCELLING)), Job.lease_owner.isnot(None)),
            ),
            *_owners(Job.owner_id, owners),
        )
        .group_by(Job.owner_id)
    )
    held = (
        select(
            Job.id,
            Job.owner_id,
            func.row_number()
            .over(partition_by=Job.owner_id, order_by=(Job.created_at, Job.id))
            .label("place"),
        )
        .where(Job.state == JobState.QUEUED, Job.enqueued_at.is_(None), *_owners(Job.owner_id, owners))
        .subquery()
    )
    return in_flight, held


def _shards_to_release(owners: Collection[int] | None) -> tuple[Select, Subquery]:
    in_flight = (
        select(Job.owner_id, func.count().label("n"))
        .join(Shard, Shard.job_id == Job.id)
        .where(
            or_(
                and_(Shard.state == ShardState.QUEUED, Shard.enqueued_at.isnot(None)),
                Shard.state == ShardState.RUNNING,
            ),
            *_owners(Job.owner_id, owners),
        )
        .group_by(Job.owner_id)
    )
    held = (
        select(
            Shard.id,
            Job.owner_id,
            func.row_number()
            # a shard interrupted by a dead worker goes first: the job waits on it
            .over(partition_by=Job.owner_id, order_by=(Shard.attempts == 0, Job.created_at, Shard.id))
            .label("place"),
        )
        .join(Job, Job.id == Shard.job_id)
        .where(
            Shard.state == ShardState.QUEUED,
            Shard.enqueued_at.is_(None),
            Job.state == JobState.RUNNING,
            Job.cancel_requested.is_(False),
            *_owners(Job.owner_id, owners),
        )
        .subquery()
    )
    return in_flight, held


def _pick(session: Session, in_flight: Select, held: Subquery, window: int) -> list:
    """The held rows whose place in their client's line fits what its window has left.

    Two plain statements, each planned on its own: inside one UPDATE, a planner without fresh statistics
    (a new deployment's first bulk job) put the window query on the inner side of a nested loop and ran
    it once per held row."""
    room = {owner: window - n for owner, n in session.execute(in_flight)}
    fitting = session.execute(
        select(held.c.id, held.c.owner_id, held.c.place).where(held.c.place <= window).order_by(held.c.place)
    )
    return [row_id for row_id, owner, place in fitting if place <= room.get(owner, window)][:BATCH]


def _holding(session: Session) -> list[int]:
    """The clients with held work (jobs, or shards of running jobs, never sent)."""
    jobs = select(Job.owner_id).where(Job.state == JobState.QUEUED, Job.enqueued_at.is_(None))
    shards = (
        select(Job.owner_id)
        .join(Shard, Shard.job_id == Job.id)
        .where(Shard.state == ShardState.QUEUED, Shard.enqueued_at.is_(None), Job.state == JobState.RUNNING)
    )
    return list(session.scalars(union(jobs, shards)))


def _lock(session: Session, owners: Collection[int] | None) -> list[int]:
    """Take the release locks of these clients (None: every client with held work), in id order so that
    two releasers never wait on each other crosswise; returns them."""
    locked = sorted(set(_holding(session) if owners is None else owners))
    for owner in locked:
        session.execute(select(func.pg_advisory_xact_lock(RELEASE_LOCK, owner)))
    return locked


def release(session: Session, window: int, owners: Collection[int] | None = None) -> Released:
    """Mark sent, and return, the held work that fits each client's window (`owners`: only theirs).
    The caller publishes it once this transaction commits."""
    owners = _lock(session, owners)
    if not owners:
        return Released()
    jobs = session.scalars(
        update(Job)
        .where(Job.id.in_(_pick(session, *_jobs_to_release(owners), window)), Job.enqueued_at.is_(None))
        .values(enqueued_at=func.now())
        .returning(Job.id)
    )
    released = Released(jobs=list(jobs))
    shards = session.execute(
        update(Shard)
        .where(Shard.id.in_(_pick(session, *_shards_to_release(owners), window)), Shard.enqueued_at.is_(None))
        .values(enqueued_at=func.now())
        .returning(Shard.id, Shard.attempts)
    ).all()
    released.shards = [shard_id for shard_id, attempts in shards if not attempts]
    released.retried_shards = [shard_id for shard_id, attempts in shards if attempts]
    return released
