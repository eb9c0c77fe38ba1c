"""Every client's request budget (ZOLVE_RATE_LIMIT, e.g. 1,200 per minute), shared by every API process
through Redis without a Redis round trip per request.

A process takes its client's requests from Redis in batches: one `INCRBY` of the window's counter (the
`limits` library's storage and its fixed window) reserves a batch of the budget, which the process then
spends from memory. Since a reservation counts in Redis before any request is let through, the processes
together never let a client past its budget; a process may end a window with part of a batch unspent
(at most `batch - 1` requests of a client per process and window, and a batch is at most a fiftieth of the
budget), so a client spread over several processes may be refused slightly before its budget is spent.
A budget of 50 or less is reserved one request at a time: exact, as a round trip per request was. Once
Redis has nothing left of a client's window, the process refuses it from memory until the window ends:
a client flooding past its budget costs no Redis call per request.

If Redis is away, each process counts in its own memory rather than failing requests, as Flask-Limiter's
fallback did: a broker outage must not stop the API from answering.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from cachetools import TTLCache
from limits import RateLimitItem, parse
from limits.errors import StorageError
from limits.storage import MemoryStorage, Storage, storage_from_string

#: a batch is this share of the budget (and never more than MAX_BATCH requests)
BATCH_SHARE = 50
MAX_BATCH = 100
#: clients whose batches a process holds at once (least recently used out first)
MAX_CLIENTS = 100_000
REDIS_SECONDS = 1.0


@dataclass
class _Batch:
    reserved: int = 0
    spent: int = 0
    #: Redis had nothing left for this window: refuse without asking again (its count only grows)
    exhausted: bool = False


class RequestBudget:
    """`allow(client)` says whether one more request of `client` is within its budget."""

    def __init__(self, limit: str, storage_uri: str, prefix: str = "zolve"):
        self.limit: RateLimitItem = parse(limit)
        self.window = self.limit.get_expiry()
        self.batch = max(1, min(MAX_BATCH, self.limit.amount // BATCH_SHARE))
        # a Redis that hangs counts as away after a second, instead of holding the request
        timeouts = {"socket_timeout": REDIS_SECONDS, "socket_connect_timeout": REDIS_SECONDS}
        storage = storage_from_string(storage_uri, wrap_exceptions=True, **timeouts)
        assert isinstance(storage, Storage), f"{storage_uri} names an asyncio storage"
        self.storage = storage
        self.fallback = MemoryStorage()
        self.prefix = prefix
        self._batches: TTLCache[tuple[str, int], _Batch] = TTLCache(MAX_CLIENTS, self.window)
        self._lock = threading.Lock()

    def seconds_left(self, now: float | None = None) -> int:
        """Until the current window ends (for Retry-After)."""
        now = time.time() if now is None else now
        return max(1, int(self.window - now % self.window + 0.999))

    def allow(self, client: str, now: float | None = None) -> bool:
        window = self._window(now)
        spent = self._spend(client, window)
        if spent is None:
            spent = self._spend(client, window, granted=self._reserve(client, window))
        return bool(spent)

    def reserved(self, client: str, now: float | None = None) -> int:
        """How much of the client's budget the processes have taken from Redis in this window."""
        return self.storage.get(self._key(client, self._window(now)))

    def _window(self, now: float | None) -> int:
        return int((time.time() if now is None else now) // self.window)

    def _spend(self, client: str, window: int, granted: int | None = None) -> bool | None:
        """Spends one request of the process's batch of the client's window, after adding what Redis
        `granted` (None: Redis not asked): True if there was one, False if the window is spent, None when
        the batch is empty and Redis is to be asked."""
        with self._lock:
            batch = self._batches.setdefault((client, window), _Batch())
            batch.reserved += granted or 0
            if batch.spent < batch.reserved:
                batch.spent += 1
                return True
            if granted is not None:
                batch.exhausted = True
            return False if batch.exhausted else None

    def _key(self, client: str, window: int) -> str:
        return f"{self.prefix}/budget/{self.limit.key_for(client, window)}"

    def _reserve(self, client: str, window: int) -> int:
        """Takes up to a batch of the client's budget for this window from Redis; returns how much."""
        key = self._key(client, window)
        try:
            total = self.storage.incr(key, self.window, amount=self.batch)
        except StorageError:  # Redis away or failing: count in this process instead
            total = self.fallback.incr(key, self.window, amount=self.batch)
        return max(0, min(self.batch, self.limit.amount - (total - self.batch)))
