"""One line when work that runs again and again (a heartbeat, a sweep, the API's requests) starts failing
because something it needs is away (the database restarting, the broker), and one line when it works
again: an outage of a minute is two lines in the log, not a traceback a second. A failure of another
kind (a bug) is logged with its traceback every time."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable


class Outage:
    """The state of one repeated piece of work: working, or failing since when and how often."""

    def __init__(
        self,
        log: logging.Logger,
        what: str,
        transient: Callable[[BaseException], bool],
        meanwhile: str = "retrying until it works",
    ) -> None:
        """`meanwhile`: what is done until it works again, said in the first line."""
        self.log, self.what, self.transient, self.meanwhile = log, what, transient, meanwhile
        self.since: float | None = None
        self.failures = 0
        self._lock = threading.Lock()

    def failed(self, error: BaseException) -> None:
        if not self.transient(error):
            self.log.warning("%s failed; retrying next time", self.what, exc_info=error)
            return
        with self._lock:
            self.failures += 1
            if self.since is not None:
                return
            self.since = time.monotonic()
        self.log.warning("%s failed (%s); %s", self.what, one_line(error), self.meanwhile)

    def succeeded(self) -> None:
        with self._lock:
            if self.since is None:
                return
            seconds, failures = time.monotonic() - self.since, self.failures
            self.since, self.failures = None, 0
        self.log.warning("%s works again, after %.0f s and %d failed tries", self.what, seconds, failures)


def one_line(error: BaseException) -> str:
    """The error's type and the first line of its message (a driver's message runs on for lines)."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
