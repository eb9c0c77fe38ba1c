"""Tables. The schema itself is only ever created by the Alembic migrations in `migrations/`."""

from __future__ import annotations

import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from core.states import FINAL_STATES, JOB_STATES, SHARD_STATES, DeliveryState, JobState, ShardState


class Base(DeclarativeBase):
    pass


class StateColumn(TypeDecorator[StrEnum]):
    """A state enum stored as its plain word in a VARCHAR (a CHECK constraint lists the words)."""

    impl = String(16)
    cache_ok = True

    def __init__(self, enum: type[StrEnum]) -> None:
        super().__init__()
        self.enum = enum

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else str(value)

    def process_result_value(self, value: str | None, dialect: Any) -> StrEnum | None:
        return None if value is None else self.enum(value)


def _words(states: tuple[StrEnum, ...]) -> tuple[str, ...]:
    return tuple(str(state) for state in states)


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (
        CheckConstraint("weight > 0 AND weight <= 100", name="api_keys_weight_range"),
        CheckConstraint("max_in_flight >= 1", name="api_keys_max_in_flight_positive"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    #: the first characters of the key, to tell keys apart without revealing them
    prefix: Mapped[str] = mapped_column(String(16))
    #: SHA-256 of the key: keys are 256-bit random tokens, so a fast hash is enough
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: signs this key's webhook deliveries (`whsec_` + base64), made on first use; readable and rotatable
    webhook_secret: Mapped[str | None] = mapped_column(Text)
    #: a dashboard session holds the generation it signed in under; logout moves it on, ending every
    #: session (and every copy of its cookie) of the key
    session_generation: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: this key's share of the workers against other backlogged keys' (store.dispatch): 1 by default
    weight: Mapped[float] = mapped_column(Float, server_default=text("1"))
    #: at most this many of its jobs (and of its shards) sent or running at once; None: the service's cap
    max_in_flight: Mapped[int | None] = mapped_column(Integer)


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint(f"state IN {_words(JOB_STATES)!r}", name="jobs_state_valid"),
        CheckConstraint("priority BETWEEN -100 AND 100", name="jobs_priority_range"),
        # keyset pagination: a client's jobs, newest first; with the list filters (owner first for
        # clients), one branch per state (store.listing)
        Index("ix_jobs_owner_created", "owner_id", "created_at", "id"),
        Index("ix_jobs_created", "created_at", "id"),
        Index("ix_jobs_owner_state_created", "owner_id", "state", "created_at", "id"),
        Index("ix_jobs_owner_kind_state_created", "owner_id", "kind", "state", "created_at", "id"),
        Index("ix_jobs_state_created", "state", "created_at", "id"),
        Index("ix_jobs_kind_state_created", "kind", "state", "created_at", "id"),
        # the cache looks up only jobs whose stored rows it can serve; retention asks who reads whose rows
        Index("ix_jobs_params_hash", "params_hash", postgresql_where=text("rows_job_id IS NOT NULL")),
        Index("ix_jobs_rows_job", "rows_job_id", postgresql_where=text("rows_job_id IS NOT NULL")),
        # the per-key quota and fair release count a client's unfinished jobs
        Index(
            "ix_jobs_owner_unfinished",
            "owner_id",
            "state",
            postgresql_where=text("state IN ('queued', 'running', 'cancelling')"),
        ),
        # store.dispatch ranks one client's held jobs (queued, never sent): highest priority, then oldest
        Index(
            "ix_jobs_held",
            "owner_id",
            text("priority DESC"),
            "created_at",
            "id",
            postgresql_where=text("state = 'queued' AND enqueued_at IS NULL"),
        ),
        # the sweeper ends the jobs not started within their queue_timeout
        Index(
            "ix_jobs_queue_timeout",
            "created_at",
            postgresql_where=text("state = 'queued' AND queue_timeout IS NOT NULL AND started_at IS NULL"),
        ),
        # and counts the ones that take a place in the client's window (sent, or running under a lease)
        Index(
            "ix_jobs_sent",
            "owner_id",
            postgresql_where=text(
                "(state = 'queued' AND enqueued_at IS NOT NULL)"
                " OR (state IN ('running', 'cancelling') AND lease_owner IS NOT NULL)"
            ),
        ),
        # the sweeper scans only unfinished jobs
        Index(
            "ix_jobs_unfinished",
            "state",
            "lease_expires_at",
            postgresql_where=text("state IN ('queued', 'running', 'cancelling')"),
        ),
        Index(
            "ux_jobs_owner_idempotency_key",
            "owner_id",
            "idempotency_key",
            unique=True,
            postgresql_where=text("idempotency_key IS NOT NULL"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    owner_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id"))
    kind: Mapped[str] = mapped_column(String(64))
    params: Mapped[dict[str, Any]] = mapped_column(JSONB)
    params_hash: Mapped[str] = mapped_column(String(64))
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    time_limit: Mapped[float] = mapped_column(Float)
    #: -100 to 100: among its owner's waiting work, higher starts first (store.dispatch)
    priority: Mapped[int] = mapped_column(SmallInteger, server_default=text("0"))
    #: seconds from created_at the job may wait to start; past them it ends `expired` without running
    #: (None: no limit; a job that started once is not judged again)
    queue_timeout: Mapped[float | None] = mapped_column(Float)
    state: Mapped[JobState] = mapped_column(StateColumn(JobState), server_default=text("'queued'"))
    cancel_requested: Mapped[bool] = mapped_column(Boolean, server_default=text("false"))
    progress: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    #: {"message": ..., "type": ..., "traceback": ...}; the traceback is shown to admins only
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    lease_owner: Mapped[str | None] = mapped_column(Text)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    #: when the last wake-up message was published; NULL = never (broker was down): the sweeper sends it
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), onupdate=func.now()
    )
    # sharded kinds: counted here, in the same transaction as each shard's rows (no Celery chord)
    shards_total: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    shards_done: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    rows_done: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))
    #: sharded jobs: when a shard last recorded the job's `progress` event (store.shards.PROGRESS_EVERY)
    progress_event_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: the job whose stored rows (boards) this one serves: itself, or an earlier identical job (cache hit)
    rows_job_id: Mapped[uuid.UUID | None] = mapped_column(UUID(as_uuid=True))
    #: sharded jobs: when the finalize message was last published; NULL once every shard is done = not
    #: sent (the broker was down), so the sweeper sends it
    finalize_enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: how many times a finalize started: a finalize that keeps dying fails the job after max_attempts
    finalize_attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: where the final state is POSTed (signed), once per run; see store.webhooks
    callback_url: Mapped[str | None] = mapped_column(Text)
    #: how many times an operator retried the job after it failed: each run's finish is delivered
    retries: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    #: the W3C traceparent of the request that made it, while tracing is on: its workers' spans join that
    #: trace (core.tracing)
    trace_parent: Mapped[str | None] = mapped_column(Text)

    @property
    def is_final(self) -> bool:
        return self.state in FINAL_STATES


class Shard(Base):
    """One piece of a sharded job, e.g. the Planet X boards that start with a given prefix."""

    __tablename__ = "shards"
    __table_args__ = (
        CheckConstraint(f"state IN {_words(SHARD_STATES)!r}", name="shards_state_valid"),
        UniqueConstraint("job_id", "key", name="ux_shards_job_key"),
        Index(
            "ix_shards_unfinished",
            "state",
            "lease_expires_at",
            postgresql_where=text("state IN ('queued', 'running')"),
        ),
        Index(
            "ix_shards_held",
            "job_id",
            "id",
            postgresql_where=text("state = 'queued' AND enqueued_at IS NULL"),
        ),
        # a chain asks whether another client's shard waits in the broker (store.shards)
        Index(
            "ix_shards_sent",
            "job_id",
            postgresql_where=text("state = 'queued' AND enqueued_at IS NOT NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(64))
    state: Mapped[ShardState] = mapped_column(StateColumn(ShardState), server_default=text("'queued'"))
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    lease_owner: Mapped[str | None] = mapped_column(Text)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    row_count: Mapped[int | None] = mapped_column(Integer)
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    #: seconds spent solving (not queueing, not writing)
    solve_seconds: Mapped[float | None] = mapped_column(Float)


class Row(Base):
    """One row a job stored (a kind with rows, kinds.base.Rows): its sort key within the job, and a payload
    in the kind's own format when the key does not say it all (a Planet X board is its key alone)."""

    __tablename__ = "rows"

    # no foreign key: the per-row check would slow COPY; rows go when their job is purged
    job_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    key: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    payload: Mapped[bytes | None] = mapped_column(LargeBinary)


class RowBlock(Base):
    """Many keys a job stored, of a kind whose rows are keys alone (a Planet X board is its code): a
    shard's, or a run of a job's keys merged when its shards were all stored (store.rows.compact). The
    keys are sorted, big-endian 8 bytes each; `keys` is stored out of line, uncompressed (migration
    0021), so that the spans can be read without it."""

    __tablename__ = "row_blocks"

    # no foreign key, as for rows: blocks go when their job is purged
    job_id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True)
    first_key: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    last_key: Mapped[int] = mapped_column(BigInteger)
    count: Mapped[int] = mapped_column(Integer)
    keys: Mapped[bytes] = mapped_column(LargeBinary)


class JobEvent(Base):
    """A job's history: each state transition and each operator action, in order (see store.events)."""

    __tablename__ = "job_events"
    __table_args__ = (Index("ix_job_events_job", "job_id", "id"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    #: created, planned, running, progress, succeeded, failed, cancel_requested, cancelled, requeued,
    #: retried, shard_requeued
    event: Mapped[str] = mapped_column(String(32))
    attempt: Mapped[int | None] = mapped_column(Integer)
    #: the API key that asked for it (an operator's action, a client's cancel); None for the system
    actor_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id"))
    detail: Mapped[dict[str, Any] | None] = mapped_column(JSONB)


class Worker(Base):
    """A worker process that runs tasks (a pool process of a Celery worker), upserted by its parent's
    heartbeat: alive while `heartbeat_at` is recent and `stopped_at` unset; its name
    (`host:pid:boot_id`) is the `lease_owner` of what it runs."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    hostname: Mapped[str] = mapped_column(Text)
    pid: Mapped[int] = mapped_column(Integer)
    #: the Celery worker (node) the process belongs to
    node: Mapped[str | None] = mapped_column(Text)
    #: the start of that Celery worker (random per start): its heartbeat touches only rows of its boot
    boot_id: Mapped[str | None] = mapped_column(Text, index=True)
    #: when the parent saw the process leave its pool (recycled or killed): its leases are orphans
    stopped_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: it runs jobs and shards (its worker consumes a solver queue); a webhook sender does not, and the
    #: dispatch window (store.dispatch) counts only these
    solves: Mapped[bool] = mapped_column(Boolean, server_default=text("true"))
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    heartbeat_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now(), index=True
    )


# the dashboard's per-minute chart reads the last hour of finished jobs and shards
Index("ix_jobs_finished_at", Job.finished_at)
Index("ix_shards_finished_at", Shard.finished_at)


class Batch(Base):
    """Many requests of one kind submitted together; each distinct params set runs as one job."""

    __tablename__ = "batches"
    __table_args__ = (
        Index("ix_batches_owner_created", "owner_id", "created_at"),
        Index("ix_batches_created_id", "created_at", "id"),
        Index(
            "ux_batches_owner_idempotency_key",
            "owner_id",
            "idempotency_key",
            unique=True,
            postgresql_where=text("idempotency_key IS NOT NULL"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(UUID(as_uuid=True), primary_key=True, default=uuid.uuid4)
    owner_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id"))
    kind: Mapped[str] = mapped_column(String(64))
    item_count: Mapped[int] = mapped_column(Integer)
    job_count: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    #: POSTed (signed) once every job of the batch has finished
    callback_url: Mapped[str | None] = mapped_column(Text)
    #: the client's Idempotency-Key, and the digest of the request it came with (a repeat must match)
    idempotency_key: Mapped[str | None] = mapped_column(Text)
    request_hash: Mapped[str | None] = mapped_column(Text)


class BatchItem(Base):
    """One request of a batch, by the client's id: its job (shared by identical requests) or why it was
    rejected."""

    __tablename__ = "batch_items"
    __table_args__ = (UniqueConstraint("batch_id", "client_id", name="ux_batch_items_client_id"),)

    batch_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("batches.id", ondelete="CASCADE"), primary_key=True
    )
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    client_id: Mapped[str] = mapped_column(String(100))
    job_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    #: field errors of a rejected item (its params did not validate): no job
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONB)


class ResultItem(Base):
    """One item of a result too large to store whole (see store.results): the result keeps a count."""

    __tablename__ = "result_items"

    job_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    item: Mapped[dict[str, Any]] = mapped_column(JSONB)


# -- counters kept per transition by triggers (migration 0009; read through store.tallies) ----------------
class JobTally(Base):
    """Jobs per kind, state and run-time bucket (-1: no run time; else an index into
    store.metrics.RUN_SECONDS_BUCKETS, its length for +Inf), with their run seconds: the compacted part."""

    __tablename__ = "job_tallies"

    kind: Mapped[str] = mapped_column(String(64), primary_key=True)
    state: Mapped[str] = mapped_column(String(16), primary_key=True)
    run_bucket: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    jobs: Mapped[int] = mapped_column(BigInteger)
    run_seconds: Mapped[float] = mapped_column(Float)


class JobTallyDelta(Base):
    """What each statement on `jobs` changed in the tallies, appended by its trigger until compacted."""

    __tablename__ = "job_tally_deltas"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    kind: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(16))
    run_bucket: Mapped[int] = mapped_column(SmallInteger)
    jobs: Mapped[int] = mapped_column(BigInteger)
    run_seconds: Mapped[float] = mapped_column(Float)


class ShardTally(Base):
    """Shards per state, and the rows (boards) their succeeded ones stored: the compacted part."""

    __tablename__ = "shard_tallies"

    state: Mapped[str] = mapped_column(String(16), primary_key=True)
    shards: Mapped[int] = mapped_column(BigInteger)
    rows: Mapped[int] = mapped_column(BigInteger)


class ShardTallyDelta(Base):
    __tablename__ = "shard_tally_deltas"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    state: Mapped[str] = mapped_column(String(16))
    shards: Mapped[int] = mapped_column(BigInteger)
    rows: Mapped[int] = mapped_column(BigInteger)


# -- webhooks (migration 0010) ---------------------------------------------------------------------------
class WebhookDelivery(Base):
    """One webhook to send: a finished job's (or batch's) status to its callback URL. Made by a trigger in
    the transaction that finished the job; sent and retried by the workers' webhook tasks."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        CheckConstraint("state IN ('pending', 'delivered', 'failed')", name="webhook_deliveries_state"),
        CheckConstraint("(job_id IS NULL) <> (batch_id IS NULL)", name="webhook_deliveries_target"),
        Index("ux_webhook_deliveries_job", "job_id", "job_run", unique=True),
        Index("ux_webhook_deliveries_batch", "batch_id", unique=True),
        Index("ix_webhook_deliveries_pending", "next_attempt_at", postgresql_where=text("state = 'pending'")),
        Index(
            "ix_webhook_deliveries_unsent",
            "id",
            postgresql_where=text("state = 'pending' AND enqueued_at IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id"))
    job_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    #: the job's run it reports (jobs.retries when it finished): a retried job's finish is a new delivery
    job_run: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    batch_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("batches.id", ondelete="CASCADE"))
    url: Mapped[str] = mapped_column(Text)
    state: Mapped[DeliveryState] = mapped_column(StateColumn(DeliveryState), server_default=text("'pending'"))
    attempts: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    #: when its task was last published; NULL = not yet (the sweeper, or the next send, publishes it)
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    next_attempt_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )
    #: held by the task sending it (a duplicate message does nothing meanwhile)
    lease_expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class WebhookAttempt(Base):
    """One try at a delivery: the receiver's status (None: no answer), how long it took, and why it did
    not deliver in the service's own words (`timeout`, `HTTP 500`, ...; never the receiver's bytes)."""

    __tablename__ = "webhook_attempts"
    __table_args__ = (Index("ix_webhook_attempts_delivery", "delivery_id", "attempt"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    delivery_id: Mapped[int] = mapped_column(ForeignKey("webhook_deliveries.id", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    status_code: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    reason: Mapped[str | None] = mapped_column(Text)
