"""Two fixes to how a worker meets a broker that went away.

A workaround for a kombu bug (5.7) that otherwise wedges a worker whenever Redis goes away while it runs
tasks: the consumer closes its connection, and the Redis QoS then tries to restore (or acknowledge) the
unacknowledged messages through a channel whose transport has already been detached from its connection
(`'NoneType' object has no attribute 'hostname'`). Celery reports an "Unrecoverable error", and the
worker hangs instead of reconnecting. Upstream: the same AttributeError from `restore_unacked` is
celery/kombu#970 (closed for 4.2.x, back in 5.x here); a worker that stops consuming after Redis comes
back is celery/celery#8030 and #10205. Remove the patch once a kombu release passes
tests/workers/test_recovery.py without it.

Skipping those calls loses nothing zolve relies on: a broker that went away took its messages with it
(or restores them after the visibility timeout), and PostgreSQL's rows say what still needs a message,
which the sweeper sends.

The patch reaches into kombu's Redis QoS (its `restore_unacked` and `ack`, and the `_delivered` map they
keep), so it is applied only on the kombu releases it was checked against (PATCHED_KOMBU); on any other
the QoS is left as it is, with a warning. tests/workers/test_broker_fixes.py is the canary: it fails when
the installed kombu is outside that range or the patched methods' code has changed.

And a consumer that retries the lost connection every second instead of kombu's back-off (2, 4, 6 … up
to 30 s between attempts), so a worker takes work again within a second or two of Redis coming back.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

import kombu
from celery.worker.consumer import Consumer
from kombu.transport import redis as kombu_redis
from kombu.transport import virtual
from packaging.specifiers import SpecifierSet
from packaging.version import Version

log = logging.getLogger("zolve.worker")

#: the kombu releases whose Redis QoS this patch was checked against
PATCHED_KOMBU = SpecifierSet(">=5.3,<5.8")


def _detached(qos: Any) -> bool:
    return getattr(qos.channel.connection, "client", None) is None


def _restore_unless_detached(restore: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(restore)
    def restore_unacked(self: Any, client: Any = None) -> Any:
        if _detached(self):
            log.warning(
                "broker connection already closed: its unacknowledged messages are left to the sweeper"
            )
            self._delivered.clear()
            return None
        return restore(self, client)

    return restore_unacked


def _ack_unless_detached(ack: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(ack)
    def ack_message(self: Any, delivery_tag: Any) -> Any:
        if _detached(self):
            # forget it locally; the broker's copy is gone (kombu leaves QoS.ack unannotated)
            return virtual.QoS.ack(self, delivery_tag)  # type: ignore[no-untyped-call]
        return ack(self, delivery_tag)

    return ack_message


def install() -> None:
    """Patch kombu's Redis QoS once per process (idempotent), on the releases it was checked against."""
    if Version(kombu.__version__) not in PATCHED_KOMBU:
        log.warning("kombu %s is not a release the QoS patch was checked for: unpatched", kombu.__version__)
        return
    qos: Any = kombu_redis.QoS  # monkeypatched below, which its types do not allow
    if not getattr(qos, "_zolve_patched", False):
        qos.restore_unacked = _restore_unless_detached(qos.restore_unacked)
        qos.ack = _ack_unless_detached(qos.ack)
        qos._zolve_patched = True


class PromptReconnectConsumer(Consumer):
    """Celery's consumer, retrying a lost broker connection every second (kombu backs off to 30 s, so a
    worker could sit idle for half a minute after Redis is back)."""

    def ensure_connected(self, conn: Any) -> Any:
        conn.ensure_connection = functools.partial(
            conn.ensure_connection, interval_start=0.5, interval_step=0.5, interval_max=1.0
        )
        return super().ensure_connected(conn)
