"""The Celery app and every Celery setting, in one documented place.

Redis carries only job ids. Reliability comes from PostgreSQL leases (see store.jobs), so the broker
settings here only make redelivery *possible*; the sweeper makes it *certain*.
"""

from __future__ import annotations

import logging
from typing import Any

from amqp.exceptions import ChannelError
from celery import Celery

from core.config import Settings
from services.messages import QUEUE, SHORT_QUEUE

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


def _waiting(channel: Any, queue: str) -> int:
    try:
        count: int = channel.queue_declare(queue, passive=True).message_count
        return count
    except ChannelError:  # the broker does not know the queue (e.g. Redis restarted empty): nothing waits
        return 0
