"""Jobs served from memory, per app, so that many clients polling a running job cost a few queries a
second. The request threads share one cache under a lock; it is bounded by bytes (each job counted by
its JSON), and a job bigger than MAX_CACHED_JOB_BYTES (a large result) is read from the database every
time instead of held, so no client can fill an API process's memory by reading large results.

A copy is served until it is its lifetime old (ZOLVE_STATUS_CACHE_SECONDS for an unfinished job), never
longer. A job polled once its copy is past REFRESH_AT of that lifetime is read again by a thread of the
cache's own, together with every other job due, in one query: a job polled often is read on a request's
thread only when it is first seen, and a process polled for many unfinished jobs makes a few queries a
second for all of them, not one per job. Request threads that miss the same job at once share one read.
A read that began before this app changed the job (`forget`: a cancel, a retry) is not kept. The copies
are read models (services.reads.jobs.JobView), never live ORM rows: a copy read again and equal to the one
held keeps the answers rendered from it."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import threading
import time
import uuid
import weakref
from collections import Counter
from collections.abc import Callable, Hashable
from concurrent.futures import Future
from typing import NamedTuple

from cachetools import TLRUCache
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from core.outages import Outage
from services.reads.jobs import JobView, Loader

log = logging.getLogger(__name__)

#: the jobs held, in bytes of their JSON (params, progress, result, error, plus a fixed allowance)
STATUS_CACHE_BYTES = 8 << 20
#: a job bigger than this is never held
MAX_CACHED_JOB_BYTES = 16 << 10
#: what a job costs beside its JSON documents (its row's other columns, the entry)
ENTRY_BYTES = 1024
#: an entry holds the job and at most two answers rendered from it (e.g. its owner's and an admin's), each
#: about the job's size; answers for more views are rendered every time
RENDERED_COPIES = 3
#: a finished job changes again only when an operator retries it from the dashboard; unfinished ones are
#: kept for ZOLVE_STATUS_CACHE_SECONDS
FINAL_CACHE_SECONDS = 60.0
#: a copy read when polled past this share of its lifetime is read again in the background
REFRESH_AT = 0.6
#: the background reader gathers the jobs due for this long before reading them in one query
REFRESH_GATHER_SECONDS = 0.05
#: jobs read in one query at most
REFRESH_BATCH = 500
#: after a failed background read (the database down), the next waits this long; meanwhile copies expire
#: and their polls read the database themselves, answering 503 as any request then does
REFRESH_PAUSE_AFTER_ERROR = 1.0
#: how often an idle background reader checks that its cache is still in use
REFRESHER_CHECK_SECONDS = 30.0
#: a thread missing a job that another is reading waits for that read this long, then reads for itself
SHARED_READ_SECONDS = 2.0

_ENCODER = json.JSONEncoder(default=str)


class Rendered(NamedTuple):
    """A job's answer as sent: its JSON body, and the digest of that body its ETag is made from."""

    body: bytes
    digest: str


class _Entry(NamedTuple):
    job: JobView
    #: when the read that made this copy began (time.monotonic): the copy is served until read_at + ttl
    read_at: float
    ttl: float
    size: int
    #: the answers rendered from this very job, by the reader's view (api.jobs: admin or not, and the
    #: prefix its links are under)
    rendered: dict[Hashable, Rendered]


def json_size(job: JobView, limit: int = MAX_CACHED_JOB_BYTES) -> int:
    """The job's size in bytes, counted only until it passes `limit` (a big result is not walked through)."""
    size = ENTRY_BYTES
    for document in (job.params, job.progress, job.result, job.error):
        for chunk in _ENCODER.iterencode(document):
            size += len(chunk)
            if size > limit:
                return size
    return size


class JobCache:
    """cachetools' TLRUCache (a TTL per entry: finished jobs live longer; least recently used out first)
    measured in bytes, under a lock; with `load`, copies polled near the end of their lifetime are read
    again in the background, in batches."""

    def __init__(
        self,
        max_bytes: int = STATUS_CACHE_BYTES,
        max_job_bytes: int = MAX_CACHED_JOB_BYTES,
        *,
        load: Loader | None = None,
        unfinished_seconds: float = 1.0,
        background: bool = True,
    ):
        self.max_job_bytes = max_job_bytes
        self.unfinished_seconds = unfinished_seconds
        self._cache: TLRUCache[uuid.UUID, _Entry] = TLRUCache(
            max_bytes,
            ttu=lambda _key, entry, _now: entry.read_at + entry.ttl,
            timer=time.monotonic,
            getsizeof=lambda entry: entry.size,
        )
        self._lock = threading.Lock()
        self._load = load
        #: a thread of its own reads the jobs due (False: whoever calls refresh_due, e.g. a test)
        self._background = background
        #: jobs due for a background read, oldest first (a dict as an ordered set)
        self._due: dict[uuid.UUID, None] = {}
        #: jobs being read in the background, and those among them forgotten meanwhile (their copy, read
        #: before this app's change, must not be kept)
        self._reading: Counter[uuid.UUID] = Counter()
        self._forgotten: set[uuid.UUID] = set()
        #: the reads on request threads under way, by job: threads missing the same job share one
        self._flights: dict[uuid.UUID, Future[JobView | None]] = {}
        self._wake = threading.Event()
        self._refresher: threading.Thread | None = None

    def __contains__(self, job_id: object) -> bool:
        with self._lock:
            return job_id in self._cache

    def ttl_of(self, job: JobView) -> float:
        return FINAL_CACHE_SECONDS if job.is_final else self.unfinished_seconds

    def get(self, job_id: uuid.UUID) -> JobView | None:
        with self._lock:
            entry = self._cache.get(job_id)
            if entry is None:
                return None
            due = self._load is not None and time.monotonic() - entry.read_at >= entry.ttl * REFRESH_AT
            newly_due = due and self._ask_refresh(job_id)
        if newly_due and self._background:
            self._start_refresher()
        return entry.job

    def put(self, job: JobView, ttl: float | None = None, read_at: float | None = None) -> None:
        """Keep this copy of the job, read at `read_at` (now by default), for `ttl` (by its state by
        default)."""
        size = json_size(job, self.max_job_bytes)
        ttl = self.ttl_of(job) if ttl is None else ttl
        read_at = time.monotonic() if read_at is None else read_at
        with self._lock:
            self._keep(job, size, ttl, read_at)

    def _keep(self, job: JobView, size: int, ttl: float, read_at: float) -> None:
        if size > self.max_job_bytes:
            self._cache.pop(job.id, None)  # an older, smaller copy must not be served either
        else:
            self._cache[job.id] = _Entry(job, read_at, ttl, size * RENDERED_COPIES, {})

    def rendered(self, job: JobView, view: Hashable) -> Rendered | None:
        """The answer kept for this job (this very copy of it, not an older or newer one), if any."""
        with self._lock:
            entry = self._cache.get(job.id)
            if entry is None or entry.job is not job:
                return None
            return entry.rendered.get(view)

    def keep_rendered(self, job: JobView, view: Hashable, answer: Rendered) -> None:
        with self._lock:
            entry = self._cache.get(job.id)
            if entry is not None and entry.job is job and len(entry.rendered) < RENDERED_COPIES - 1:
                entry.rendered[view] = answer

    def forget(self, job_id: uuid.UUID) -> None:
        with self._lock:
            self._cache.pop(job_id, None)
            self._due.pop(job_id, None)
            self._flights.pop(job_id, None)  # a read begun before: threads missing the job from now read anew
            if self._reading[job_id]:
                self._forgotten.add(job_id)

    @property
    def held_bytes(self) -> int:
        with self._lock:
            return int(self._cache.currsize)

    def _ask_refresh(self, job_id: uuid.UUID) -> bool:
        """Under the lock: have this job read again in the background; True when it was not due yet."""
        if job_id in self._due or job_id in self._reading:
            return False
        self._due[job_id] = None
        self._wake.set()
        return True

    def _start_refresher(self) -> None:
        """Start the background reader unless it runs (started by the process that asks, so after any
        fork)."""
        with self._lock:
            if self._refresher is not None and self._refresher.is_alive():
                return
            # it holds the cache weakly: a cache dropped (an app of a test) ends its thread
            self._refresher = threading.Thread(
                target=_refresh_forever, args=(weakref.ref(self), self._wake), name="job-cache", daemon=True
            )
        self._refresher.start()

    def refresh_due(self) -> None:
        """Read the jobs due (at most REFRESH_BATCH) in one query, and keep each copy unless the job was
        forgotten, or read again by a request, meanwhile."""
        load = self._load
        if load is None:
            return
        with self._lock:
            batch = list(itertools.islice(self._due, REFRESH_BATCH))
            for job_id in batch:
                del self._due[job_id]
            if not self._due:
                self._wake.clear()
        if batch:
            self._read_and_keep(batch, lambda: load(batch))

    def read(
        self, job_id: uuid.UUID, read: Callable[[], JobView | None], shared: bool = True
    ) -> JobView | None:
        """The job as `read()` gives it (None: no such job), kept. When `shared`, threads missing the same
        job at once share one read: the others wait for it, up to SHARED_READ_SECONDS, and read for
        themselves if it fails or takes longer."""
        if not shared:
            return self._read_one(job_id, read)
        with self._lock:
            entry = self._cache.get(job_id)
            if entry is not None:  # kept by a read that ended since this thread missed it
                return entry.job
            flight = self._flights.get(job_id)
            leading = flight is None
            if flight is None:
                flight = self._flights[job_id] = Future()
        if not leading:
            with contextlib.suppress(Exception):
                return flight.result(timeout=SHARED_READ_SECONDS)
            return self._read_one(job_id, read)
        try:
            job = self._read_one(job_id, read)
        except Exception as exc:
            flight.set_exception(exc)
            raise
        else:
            flight.set_result(job)
            return job
        finally:
            with self._lock:
                if self._flights.get(job_id) is flight:
                    del self._flights[job_id]
            if not flight.done():  # interrupted (not an Exception): those waiting read for themselves
                flight.set_exception(RuntimeError("the shared read was interrupted"))

    def _read_one(self, job_id: uuid.UUID, read: Callable[[], JobView | None]) -> JobView | None:
        return self._read_and_keep([job_id], lambda: [job for job in [read()] if job is not None])[job_id]

    def _read_and_keep(
        self, job_ids: list[uuid.UUID], read: Callable[[], list[JobView]]
    ) -> dict[uuid.UUID, JobView | None]:
        """Read these jobs (`read()` gives those that exist) and keep each copy (see _keep_read); the job to
        serve for each (None: no such job)."""
        with self._lock:
            self._reading.update(job_ids)
        read_at = time.monotonic()
        try:
            found = {job.id: (job, json_size(job, self.max_job_bytes)) for job in read()}
        except BaseException:
            with self._lock:
                self._done_reading(job_ids)
            raise
        with self._lock:
            forgotten = self._done_reading(job_ids)
            kept = {}
            for job_id in job_ids:
                job, size = found.get(job_id, (None, 0))
                kept[job_id] = self._keep_read(job_id, job, size, read_at, job_id in forgotten)
            return kept

    def _keep_read(
        self, job_id: uuid.UUID, job: JobView | None, size: int, read_at: float, forgotten: bool
    ) -> JobView | None:
        """Under the lock: keep what a read begun at `read_at` found (None: no such job), unless the job
        was forgotten meanwhile (a change this app made after the read) or read later by another; the job
        to serve (the copy held when the row is unchanged, with the answers rendered from it)."""
        current = self._cache.get(job_id)
        if forgotten or (current is not None and current.read_at >= read_at):
            return job
        if job is None:
            self._cache.pop(job_id, None)  # deleted (purged)
        elif current is not None and current.job == job:
            self._cache[job_id] = current._replace(read_at=read_at)
            return current.job
        else:
            self._keep(job, size, self.ttl_of(job), read_at)
        return job

    def _done_reading(self, job_ids: list[uuid.UUID]) -> set[uuid.UUID]:
        """Under the lock: these reads are done; those of their jobs forgotten since a read of them began
        (marks kept until the job's last read under way is done)."""
        self._reading.subtract(job_ids)
        forgotten = self._forgotten.intersection(job_ids)
        for job_id in job_ids:
            if self._reading[job_id] <= 0:
                del self._reading[job_id]
                self._forgotten.discard(job_id)
        return forgotten


#: the cache's reader's outages (one reader a process)
REFRESHES = Outage(
    log, "reading cached jobs again", lambda error: isinstance(error, DBAPIError | PoolTimeout)
)


def _refresh_forever(cache_ref: weakref.ref[JobCache], wake: threading.Event) -> None:
    """The cache's reader: reads the jobs due whenever some are, until the cache is gone."""
    while True:
        woken = wake.wait(timeout=REFRESHER_CHECK_SECONDS)
        cache = cache_ref()
        if cache is None:
            return
        if woken:
            time.sleep(REFRESH_GATHER_SECONDS)
            try:
                cache.refresh_due()
            except Exception as error:  # noqa: BLE001 - copies expire, and polls read the database themselves
                REFRESHES.failed(error)  # an outage in two lines; anything else with its traceback
                time.sleep(REFRESH_PAUSE_AFTER_ERROR)
            else:
                REFRESHES.succeeded()
        del cache
