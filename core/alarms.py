"""Alarm clocks: one long-lived thread each that runs actions at given times (the standard library's
`sched`), for a run's deadline and a worker's heartbeats.

A thread started for every shard waited for a time slice before `start()` returned, and again for
`join()`, whenever the machine's other cores were busy: a share of each shard's time (docs/benchmarks.md,
"Less serial time, no thread per shard"). Arming an alarm on a clock whose thread already runs waits for
nobody.

An action runs on the clock's thread, so it must be short or bounded; an exception in it is logged and the
clock goes on. A process forked from one whose clock ran (a Celery prefork child, a solver's pool) starts
its own thread on first use, with fresh locks: the fork may have copied one that the parent's clock
thread held at that moment."""

from __future__ import annotations

import contextlib
import logging
import sched
import threading
import time
from collections.abc import Callable

from core import forks

log = logging.getLogger("zolve.alarms")


class Alarm:
    """An armed action; `cancel()` stops it (and, for a repeating one, every later turn)."""

    def __init__(self, clock: AlarmClock, action: Callable[[], None], every: float | None) -> None:
        self._clock, self._action, self._every = clock, action, every
        self._lock = threading.Lock()
        self._event: sched.Event | None = None
        self._cancelled = False

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            event, self._event = self._event, None
        if event is not None:
            self._clock.forget(event)

    def _arm(self, delay: float) -> None:
        with self._lock:
            if not self._cancelled:
                self._event = self._clock.enter(delay, self._ring)

    def _ring(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._event = None
        try:
            self._action()
        except Exception:
            log.exception("an alarm's action failed")
        if self._every is not None:
            self._arm(self._every)


class AlarmClock:
    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._started = False
        self._scheduler = sched.scheduler(time.monotonic, self._sleep)
        self._wake = threading.Event()
        forks.reset_in_child(self, AlarmClock._forget_parent)

    def _forget_parent(self) -> None:
        """In a forked child: no thread runs here yet, and the parent's lock may have been held."""
        self._lock = threading.Lock()
        self._started = False

    def after(self, delay: float, action: Callable[[], None]) -> Alarm:
        """Run `action` once, `delay` seconds from now."""
        alarm = Alarm(self, action, every=None)
        alarm._arm(delay)
        return alarm

    def every(self, interval: float, action: Callable[[], None]) -> Alarm:
        """Run `action` every `interval` seconds (the first time `interval` from now) until cancelled."""
        alarm = Alarm(self, action, every=interval)
        alarm._arm(interval)
        return alarm

    def enter(self, delay: float, action: Callable[[], None]) -> sched.Event:
        self._running()
        event = self._scheduler.enter(max(0.0, delay), 0, action)
        self._wake.set()  # the thread may be asleep until a later alarm: it looks again
        return event

    def forget(self, event: sched.Event) -> None:
        with contextlib.suppress(ValueError):  # it has rung already
            self._scheduler.cancel(event)

    def _running(self) -> None:
        with self._lock:
            if self._started:
                return
            # a fresh process (or one forked after its parent's clock ran): a scheduler and thread of its own
            self._started = True
            self._scheduler = sched.scheduler(time.monotonic, self._sleep)
            self._wake = threading.Event()
            threading.Thread(target=self._loop, name=self.name, daemon=True).start()

    def _loop(self) -> None:
        while True:
            self._scheduler.run()
            self._wake.wait()
            self._wake.clear()

    def _sleep(self, seconds: float) -> None:
        """sched's delay: until the next alarm is due, or a new one is armed (sched then looks again)."""
        if seconds > 0:
            self._wake.wait(seconds)
            self._wake.clear()
