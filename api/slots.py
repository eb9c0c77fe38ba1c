"""Places for requests that last (long-polls, event streams, exports), per API process: a total, and a
share per key so that one client cannot take them all (Slots); and turns, in order, for work that holds a
database connection (Turns)."""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Hashable

from core.waiting import Wake


class Slots:
    def __init__(self, total: int, per_key: int):
        self.total, self.per_key = total, per_key
        self._held: Counter[Hashable] = Counter()
        self._lock = threading.Lock()

    def take(self, key: Hashable) -> bool:
        """A place for `key` if one is free (never blocks); give it back with `give_back`."""
        with self._lock:
            if sum(self._held.values()) >= self.total or self._held[key] >= self.per_key:
                return False
            self._held[key] += 1
            return True

    def give_back(self, key: Hashable) -> None:
        with self._lock:
            self._held[key] -= 1
            if self._held[key] <= 0:
                del self._held[key]


class Turns:
    """At most `size` holders at once; the others wait their turn in the order they came, each woken
    (core.waiting.Wake) when it is first and a place is free. A waiter waits on the edge's event loop,
    holding no thread (api.rows: exports reading their rows)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.busy = 0
        self._waiting: deque[Wake] = deque()
        self._lock = threading.Lock()

    def take(self, wake: Wake) -> bool:
        """A place for the waiter `wake` if it is its turn; else it is queued (once) and woken later."""
        with self._lock:
            first = not self._waiting or self._waiting[0] is wake
            if self.busy < self.size and first:
                if self._waiting:
                    self._waiting.popleft()
                self.busy += 1
                return True
            if wake not in self._waiting:
                self._waiting.append(wake)
            return False

    def give_back(self) -> None:
        with self._lock:
            self.busy -= 1
        self._wake_first()

    def leave(self, wake: Wake) -> None:
        """A waiter that will not take its place any more (its request ended)."""
        with self._lock:
            if wake in self._waiting:
                self._waiting.remove(wake)
        self._wake_first()

    def _wake_first(self) -> None:
        with self._lock:
            first = self._waiting[0] if self._waiting and self.busy < self.size else None
        if first is not None:
            first.set()
