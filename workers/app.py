"""The Celery app and every Celery setting, in one documented place.

Redis carries only job ids. Reliability comes from PostgreSQL leases (see store.jobs), so the broker
settings here only make redelivery *possible*; the sweeper makes it *certain*.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from amqp.exceptions import ChannelError
from celery import Celery

from core.config import Settings
from services.messages import BULK_PRIORITY, QUEUE, RUN_JOB, RUN_SHARD, SHORT_QUEUE

log = logging.getLogger("zolve.broker")


def make_celery(settings: Settings) -> Celery:
    _, redis_url = settings.require_urls()
    hard_limit = settings.max_time_limit + 120
    app = Celery("zolve", broker=redis_url, set_as_current=False)
    app.conf.update(
        # results live in PostgreSQL, never in the broker
        task_ignore_result=True,
        result_backend=None,
        task_default_queue=QUEUE,
        # a message is acknowledged only after the task returns; a dead worker's message is redelivered
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        # last resort only: Z3 is stopped by its own timeout and by interrupt() long before this
        task_time_limit=hard_limit,
        # Redis redelivers an unacknowledged message after the visibility timeout: keep it above the
        # hard limit so a long job is never run twice while alive
        broker_transport_options={
            "visibility_timeout": hard_limit + 300,
            "socket_connect_timeout": 2,
            "socket_timeout": 5,
        },
        # never block an API request for long when Redis is down: the sweeper enqueues later
        task_publish_retry=True,
        task_publish_retry_policy={"max_retries": 1, "interval_start": 0.2, "interval_step": 0.2},
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        # Z3 leaks memory after interrupts: recycle pool processes
        worker_max_tasks_per_child=settings.max_tasks_per_child,
        worker_max_memory_per_child=settings.z3_max_memory_mb * 1024 if settings.z3_max_memory_mb else None,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        task_send_sent_event=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
        # reconnect to a broker that came back within a second or two, not kombu's back-off up to 30 s
        worker_consumer="workers.broker_fixes:PromptReconnectConsumer",
    )
    return app


#: a key zolve keeps in the broker's Redis database: when it is gone, so is every message the broker held
BROKER_MARK = "zolve:broker-mark"


def broker_was_emptied(celery: Celery) -> bool:
    """True when the broker has lost its data since the mark was last set (e.g. Redis restarted without
    persistence, or a new broker): the caller re-sends what PostgreSQL says waits for a message, then
    calls mark_broker. False when the broker cannot be asked."""
    try:
        with celery.connection_for_write() as connection:
            return not connection.default_channel.client.exists(BROKER_MARK)
    except Exception:
        return False


def mark_broker(celery: Celery) -> None:
    """Set the mark once what the broker lost was re-sent (a recovery that died half-way is redone)."""
    with celery.connection_for_write() as connection:
        connection.default_channel.client.set(BROKER_MARK, "1")


#: the queues solver work travels on (webhook deliveries have theirs apart)
SOLVER_QUEUE_NAMES = (QUEUE, SHORT_QUEUE)


def queue_depth(celery: Celery) -> int | None:
    """Messages waiting in the broker's solver queues; None when the broker cannot be asked."""
    try:
        # a pooled connection: opening one per call would be most of a /metrics scrape
        with celery.pool.acquire(block=True, timeout=2) as connection:
            return sum(_waiting(connection.default_channel, queue) for queue in SOLVER_QUEUE_NAMES)
    except Exception:
        return None


def interactive_waiting(celery: Celery) -> bool:
    """Whether the broker holds a message ahead of bulk work for the solver processes: a job, a finalize
    or a retried shard (priorities before BULK_PRIORITY), or anything on the short lane. False when the
    broker cannot be asked (a worker then goes on with what it has)."""
    try:
        with celery.pool.acquire(block=True, timeout=2) as connection:
            channel = connection.default_channel
            keys = [channel._q_for_pri(SHORT_QUEUE, priority) for priority in channel.priority_steps]
            keys += [
                channel._q_for_pri(QUEUE, priority)
                for priority in channel.priority_steps
                if priority < BULK_PRIORITY
            ]
            with channel.client.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.llen(key)
                return any(pipe.execute())
    except Exception:
        log.warning("could not ask the broker for waiting work", exc_info=True)
        return False


def _waiting(channel: Any, queue: str) -> int:
    try:
        return channel.queue_declare(queue, passive=True).message_count
    except ChannelError:  # the broker does not know the queue (e.g. Redis restarted empty): nothing waits
        return 0


@dataclass
class BrokerTargets:
    """What the broker holds a wake-up message for: job ids (RUN_JOB) and shard ids (RUN_SHARD)."""

    jobs: set[str] = field(default_factory=set)
    shards: set[str] = field(default_factory=set)


def broker_targets(celery: Celery, taken_within: float | None = None) -> BrokerTargets | None:
    """The targets of every message the broker holds for the solver queues: waiting in their lists (one
    per priority) or delivered to a worker and not yet acknowledged (kombu's `unacked` hash), read in one
    Redis transaction. None when the broker cannot be read. The queues hold only released work (a window
    per client, see store.dispatch), so reading them whole stays small.

    With `taken_within`, a message a worker took longer ago than that is not counted: a worker (prefetch
    1, acknowledging late) starts what it takes at once, so a row still queued behind such a message was
    taken by a worker that died before starting it, and the broker would hold it until its visibility
    timeout (over an hour)."""
    try:
        with celery.connection_for_write() as connection:
            channel = connection.default_channel
            with channel.client.pipeline() as pipe:
                for queue in SOLVER_QUEUE_NAMES:
                    for priority in channel.priority_steps:
                        pipe.lrange(channel._q_for_pri(queue, priority), 0, -1)
                pipe.hgetall(channel.unacked_key)
                since = "-inf" if taken_within is None else time.time() - taken_within
                pipe.zrangebyscore(channel.unacked_index_key, since, "+inf")
                *waiting, unacked, recent = pipe.execute()
    except Exception:
        log.warning("could not read the broker's messages", exc_info=True)
        return None
    held = BrokerTargets()
    payloads = [json.loads(raw) for queue in waiting for raw in queue]
    # [message, exchange, routing key] by delivery tag
    payloads += [json.loads(unacked[tag])[0] for tag in recent if tag in unacked]
    for payload in payloads:
        task, target = _task_and_target(payload)
        if task == RUN_JOB:
            held.jobs.add(target)
        elif task == RUN_SHARD:
            held.shards.add(target)
    return held


def _task_and_target(payload: dict) -> tuple[str | None, str]:
    """A Celery (protocol 2) message's task name and first argument."""
    try:
        body = payload["body"]
        if payload.get("properties", {}).get("body_encoding") == "base64":
            body = base64.b64decode(body)
        args = json.loads(body)[0]
        return payload["headers"]["task"], str(args[0]) if args else ""
    except (KeyError, IndexError, TypeError, ValueError):
        return None, ""
