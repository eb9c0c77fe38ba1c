"""Places for requests that hold a thread for long (long-polls, streamed exports), per API process: a
total that leaves threads for everything else (probes above all), and a share per key so that one client
cannot take them all."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Hashable


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
