"""The sweep: recover what dead workers, expired leases and lost messages left behind, and send what
waits for a message. One worker node at a time runs it (store.leader), on its timer; the rows alone
decide, whatever the broker's queues hold."""

from __future__ import annotations

import logging
import uuid

from services.context import Context
from services.messages import Messages, publish, publish_deliveries, release
from store import heartbeats, jobs, shards, tallies
from store import webhooks as webhook_store

log = logging.getLogger("zolve.worker")

#: how many ids a sweep's log line names per kind of change (the job's events hold every one)
LOGGED_IDS = 10


def sweep(ctx: Context, judge_silence: bool) -> jobs.SweepReport:
    """Fail, cancel or requeue what dead workers and expired leases left behind, and (re)publish wake-up
    messages: a queued row sent more than `requeue_after` ago and not claimed since is sent again
    (store.jobs.sweep). `judge_silence`: whether workers silent for a while count as dead (see
    workers.main.DatabaseHealth)."""
    settings, db = ctx.settings, ctx.db
    requeue_after = settings.requeue_after
    with db.session() as session:
        heartbeats.expire_orphaned_leases(session, settings.worker_alive_within, judge_silence)
        tallies.compact(session)  # the counters' deltas stay few, whoever reads them
    with db.session() as session:
        report = jobs.sweep(session, max_attempts=settings.max_attempts, requeue_after=requeue_after)
    with db.session() as session:
        shard_report = shards.sweep_shards(
            session,
            max_attempts=settings.max_attempts,
            requeue_after=requeue_after,
            stale_after=settings.requeue_after,
        )
    publish(
        ctx,
        Messages(jobs=report.to_enqueue, shards=shard_report.to_enqueue, finalize=shard_report.to_finalize),
    )
    # every client's held work that fits its window: after a lost message, a restarted broker or a
    # requeue, and whatever no finished task has released yet
    release(ctx)
    # webhook deliveries whose message was never sent, or lost (overdue by a requeue interval)
    with db.session() as session:
        webhook_store.forget_lost(session, settings.requeue_after + settings.webhook_timeout)
    publish_deliveries(ctx.broker, db)
    _log(report, shard_report, requeue_after)
    return report


def _log(report: jobs.SweepReport, shard_report: shards.ShardSweep, requeue_after: float | None) -> None:
    if report.to_enqueue or report.failed or report.cancelled or report.expired or shard_report.to_enqueue:
        log.info(
            "sweep: requeued %d jobs; re-sent %d jobs and %d shards (sent over %g s ago, not taken);"
            " failed %d, cancelled %d, expired %d (not started within their queue_timeout)",
            len(report.to_enqueue) - report.resent,
            report.resent,
            len(shard_report.to_enqueue),
            requeue_after,
            len(report.failed),
            len(report.cancelled),
            len(report.expired),
        )
        _log_ids("requeued or re-sent", report.to_enqueue)
        _log_ids("failed (worker lost too often)", report.failed)
        _log_ids("cancelled", report.cancelled)
        _log_ids("expired", report.expired)


def _log_ids(what: str, job_ids: list[uuid.UUID]) -> None:
    if job_ids:
        more = f" and {len(job_ids) - LOGGED_IDS} more" if len(job_ids) > LOGGED_IDS else ""
        log.info("sweep: %s: %s%s", what, ", ".join(map(str, job_ids[:LOGGED_IDS])), more)
