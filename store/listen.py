"""One LISTEN connection per process that wakes the event streams it serves when job events commit.

Event ids come from a sequence, so they are handed out in insert order but may become visible (commit) in
another order: a stream that read id 12 while id 11 was still uncommitted would skip 11 for good. The feed
therefore keeps a *safe id*: the highest id below which every id is visible, or never will be. The
database says which: when an id is missing, the feed notes a Horizon (the last id handed out, then the
transactions in progress) and passes the missing ids up to it only once all those transactions have ended
(committed: their events are visible; rolled back: never). No clock is involved, so a transaction that
commits late still has its events streamed, in id order. Streams read only up to the safe id, so a
`Last-Event-ID` resume neither misses nor repeats an event.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field

import psycopg
from sqlalchemy import make_url

from core import forks
from core.waiting import Wake
from store import events
from store.db import TCP_LIVENESS, Database

log = logging.getLogger("zolve.events")

CHANNEL = "zolve_job_events"
#: how long the listener waits for a NOTIFY before looking anyway (a lost connection shows up here)
IDLE_SECONDS = 30.0
#: event ids read per look
PAGE = 5000
#: how often the feed looks while a missing id waits for its transaction (a rollback sends no NOTIFY)
POLL_SECONDS = 0.1
#: the feed reads the events at most this often: a busy service sends a NOTIFY with every transaction that
#: records an event (a job's creation, start, progress and end), and each read is a transaction of its own
READ_EVERY_SECONDS = 0.02


@dataclass(eq=False)
class Subscription:
    """A stream's wake-up: set when events it may show (its owner's, or any for None; one job's alone,
    given `job_id`) became safe."""

    owner_id: int | None
    job_id: uuid.UUID | None = None
    #: set by the feed's thread; waited for in a thread or on the API edge's event loop (core.waiting)
    woken: Wake = field(default_factory=Wake)

    def wanted(self, owners: set[int | None], jobs: set[uuid.UUID]) -> bool:
        if self.job_id is not None:
            return self.job_id in jobs
        return self.owner_id is None or self.owner_id in owners

    def wait(self, timeout: float) -> bool:
        return self.woken.wait(timeout)


class EventFeed:
    def __init__(self, db: Database):
        self.db = db
        self.safe_id = 0
        self._subscriptions: set[Subscription] = set()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        forks.reset_in_child(self, EventFeed._forget_parent)
        self._closed = threading.Event()
        #: taken when an id was missing: the missing ids up to it pass once its writers have ended
        self._horizon: events.Horizon | None = None
        #: the last event past the safe id whose job's waits were woken already (_wake_waits_early)
        self._woken_early = 0

    def subscribe(self, owner_id: int | None, job_id: uuid.UUID | None = None) -> Subscription:
        """Wake-ups for a stream, or for a wait on one job (close with `unsubscribe`); starts the listener
        on first use."""
        self._start()
        subscription = Subscription(owner_id, job_id)
        with self._lock:
            self._subscriptions.add(subscription)
        self._ready.wait(10)
        return subscription

    def position(self) -> int:
        """The safe id now (starting the listener if need be): a stream that starts here sees what
        happens from now on."""
        self._start()
        self._ready.wait(10)
        return self.safe_id

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscriptions.discard(subscription)

    def _forget_parent(self) -> None:
        """In a forked child: the parent's listening thread did not come along (a thread never survives a
        fork), and its locks may have been held."""
        self._thread = None
        self._lock = threading.Lock()
        self._ready = threading.Event()

    def close(self) -> None:
        """Stop listening: the thread ends at its next wake-up (a NOTIFY, IDLE_SECONDS or its connection
        going away, which it then takes quietly), and no stream starts here any more."""
        self._closed.set()

    def _start(self) -> None:
        if self._closed.is_set():
            raise RuntimeError("the event feed is closed")
        with self._lock:
            if self._thread is None:
                self._ready.clear()
                self._thread = threading.Thread(target=self._run, name="zolve-event-feed", daemon=True)
                self._thread.start()

    def _conninfo(self) -> str:
        return make_url(self.db.url).set(drivername="postgresql").render_as_string(hide_password=False)

    def _run(self) -> None:
        failures = 0
        while not self._closed.is_set():
            try:
                with psycopg.connect(self._conninfo(), autocommit=True, **TCP_LIVENESS) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    if not self._ready.is_set():
                        with self.db.session() as session:
                            self.safe_id = events.last_id(session)
                        self._ready.set()
                    failures = 0
                    self._listen(connection)
            except Exception as exc:  # the database restarts, say: streams wait, then read what they missed
                if self._closed.is_set():
                    return
                failures += 1
                log.warning("event feed lost its connection (%s); reconnecting", exc, exc_info=failures == 1)
                self._closed.wait(min(1.0 * failures, 10.0))

    def _listen(self, connection: psycopg.Connection) -> None:
        while not self._closed.is_set():
            read_at = time.monotonic()
            if self._advance():
                continue  # a full page: read on before waiting
            timeout = IDLE_SECONDS if self._horizon is None else POLL_SECONDS
            for _ in connection.notifies(timeout=timeout, stop_after=1):
                pass
            self._hold_off(connection, read_at)

    def _hold_off(self, connection: psycopg.Connection, read_at: float) -> None:
        """At most one read per READ_EVERY_SECONDS: a NOTIFY after a quiet spell is read at once, but in a
        burst the NOTIFYs of the rest of the interval are taken together and one read covers them."""
        rest = read_at + READ_EVERY_SECONDS - time.monotonic()
        if rest > 0 and not self._closed.wait(rest):
            for _ in connection.notifies(timeout=0):
                pass

    def _wake_waits_early(self, visible: list[tuple[int, int | None, uuid.UUID]], safe: int) -> None:
        """A wait on one job (a long-poll, a job's stream) reads its job anew when woken, so it needs news,
        not order: events visible past a missing id wake their jobs' waits now, not once the id passes
        (which waits for every transaction open at that moment to end). Each such event wakes them once."""
        early = {job_id for event_id, _, job_id in visible if event_id > max(safe, self._woken_early)}
        if not early:
            return
        self._woken_early = max(event_id for event_id, _, _ in visible)
        with self._lock:
            woken = [s for s in self._subscriptions if s.job_id is not None and s.job_id in early]
        for subscription in woken:
            subscription.woken.set()

    def _advance(self) -> bool:
        """Move the safe id over every event now visible (and over missing ids the database says will
        never be); wake the streams of the owners (and the waits on the jobs) whose events it passed.
        True when there may be more to read at once."""
        horizon = self._horizon
        with self.db.session() as session:
            # first whether the horizon's writers ended, then the events: that read sees what they wrote
            settled = horizon if horizon is not None and events.ended(session, horizon.writers) else None
            visible = events.since(session, self.safe_id, PAGE)
        safe, owners, jobs = self.safe_id, set(), set()
        for event_id, owner, job_id in visible:
            if event_id != safe + 1 and not (settled is not None and event_id - 1 <= settled.last_id):
                break
            safe = event_id
            owners.add(owner)
            jobs.add(job_id)
        if settled is not None:
            if len(visible) < PAGE or visible[-1][0] >= settled.last_id:
                safe = max(safe, settled.last_id)  # the ids up to it that are not visible never will be
            self._horizon = None
        if self._horizon is None and any(event_id > safe for event_id, _, _ in visible):
            with self.db.session() as session:
                self._horizon = events.horizon(session)
        self._wake_waits_early(visible, safe)
        if safe == self.safe_id:
            return False
        self.safe_id = safe
        with self._lock:
            woken = [s for s in self._subscriptions if s.wanted(owners, jobs)]
        for subscription in woken:
            subscription.woken.set()
        return len(visible) == PAGE and safe == visible[-1][0]
