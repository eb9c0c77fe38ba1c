"""Jobs served from memory, per app, so that many clients polling a running job cost a few queries a
second. The request threads share one cache under a lock; it is bounded by bytes (each job counted by
its JSON), and a job bigger than MAX_CACHED_JOB_BYTES (a large result) is read from the database every
time instead of held, so no client can fill an API process's memory by reading large results."""

from __future__ import annotations

import hashlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Hashable
from typing import NamedTuple

from cachetools import TLRUCache

from api.deps import database, settings
from api.extension import zolve
from services.context import Caller
from store import jobs as job_store
from store.models import Job

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

_ENCODER = json.JSONEncoder(default=str)


class Rendered(NamedTuple):
    """A job's answer as sent: its JSON body, and the digest of that body its ETag is made from."""

    body: bytes
    digest: str


class _Entry(NamedTuple):
    job: Job
    ttl: float
    size: int
    #: the answers rendered from this very job, by the reader's view (api.jobs: admin or not, and the
    #: prefix its links are under)
    rendered: dict[Hashable, Rendered]


def json_size(job: Job, limit: int = MAX_CACHED_JOB_BYTES) -> int:
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
    measured in bytes, under a lock."""

    def __init__(self, max_bytes: int = STATUS_CACHE_BYTES, max_job_bytes: int = MAX_CACHED_JOB_BYTES):
        self.max_job_bytes = max_job_bytes
        self._cache: TLRUCache[uuid.UUID, _Entry] = TLRUCache(
            max_bytes,
            ttu=lambda _key, entry, now: now + entry.ttl,
            timer=time.monotonic,
            getsizeof=lambda entry: entry.size,
        )
        self._lock = threading.Lock()

    def __contains__(self, job_id: object) -> bool:
        with self._lock:
            return job_id in self._cache

    def get(self, job_id: uuid.UUID) -> Job | None:
        with self._lock:
            entry = self._cache.get(job_id)
        return None if entry is None else entry.job

    def put(self, job: Job, ttl: float) -> None:
        size = json_size(job, self.max_job_bytes)
        with self._lock:
            if size > self.max_job_bytes:
                self._cache.pop(job.id, None)  # an older, smaller copy must not be served either
            else:
                self._cache[job.id] = _Entry(job, ttl, size * RENDERED_COPIES, {})

    def rendered(self, job: Job, view: Hashable) -> Rendered | None:
        """The answer kept for this job (this very copy of it, not an older or newer one), if any."""
        with self._lock:
            entry = self._cache.get(job.id)
            if entry is None or entry.job is not job:
                return None
            return entry.rendered.get(view)

    def keep_rendered(self, job: Job, view: Hashable, answer: Rendered) -> None:
        with self._lock:
            entry = self._cache.get(job.id)
            if entry is not None and entry.job is job and len(entry.rendered) < RENDERED_COPIES - 1:
                entry.rendered[view] = answer

    def forget(self, job_id: uuid.UUID) -> None:
        with self._lock:
            self._cache.pop(job_id, None)

    @property
    def held_bytes(self) -> int:
        with self._lock:
            return int(self._cache.currsize)


def _cache() -> JobCache:
    return zolve().status_cache


def visible_job(job_id: uuid.UUID, caller: Caller, fresh: bool = False) -> Job | None:
    """The job if this caller may see it; `fresh` reads the database whatever the cache holds."""
    cache = _cache()
    job = None if fresh else cache.get(job_id)
    if job is None:
        with database().session() as session:
            job = job_store.get_job(session, job_id, None)
        if job is not None:
            cache.put(job, FINAL_CACHE_SECONDS if job.is_final else settings().status_cache_seconds)
    if job is None or caller.owner_filter not in (None, job.owner_id):
        return None
    return job


def rendered(job: Job, view: Hashable, render: Callable[[], bytes]) -> Rendered:
    """The job's answer for readers of this `view` (what else than the job the answer depends on): kept
    with the job while it is cached, so that polls of a cached job are not serialised again; `render()`
    makes it otherwise."""
    cache = _cache()
    answer = cache.rendered(job, view)
    if answer is None:
        body = render()
        answer = Rendered(body, hashlib.sha1(body, usedforsecurity=False).hexdigest())
        cache.keep_rendered(job, view, answer)
    return answer


def forget(job_id: uuid.UUID) -> None:
    """After a change this app made (a cancel, a retry): the next read goes to the database."""
    _cache().forget(job_id)
