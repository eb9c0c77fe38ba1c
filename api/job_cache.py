"""Jobs served from memory, per app, so that many clients polling a running job cost a few queries a
second."""

from __future__ import annotations

import time
import uuid
from collections import OrderedDict

from flask import current_app

from api.deps import database, settings
from services.context import Caller
from store import jobs as job_store
from store.models import Job

#: finished jobs are kept for FINAL_CACHE_SECONDS, unfinished ones for ZOLVE_STATUS_CACHE_SECONDS
STATUS_CACHE_SIZE = 4096
#: a finished job changes again only when an operator retries it from the dashboard
FINAL_CACHE_SECONDS = 60.0


def visible_job(job_id: uuid.UUID, caller: Caller, fresh: bool = False) -> Job | None:
    """The job if this caller may see it; `fresh` reads the database whatever the cache holds."""
    cache: OrderedDict[uuid.UUID, tuple[Job, float]] = current_app.extensions.setdefault(
        "zolve.status_cache", OrderedDict()
    )
    now = time.monotonic()
    entry = None if fresh else cache.get(job_id)
    if entry is not None and entry[1] > now:
        job = entry[0]
    else:
        with database().session() as session:
            job = job_store.get_job(session, job_id, None)
        if job is not None:
            ttl = FINAL_CACHE_SECONDS if job.is_final else settings().status_cache_seconds
            cache[job_id] = (job, now + ttl)
            while len(cache) > STATUS_CACHE_SIZE:
                cache.popitem(last=False)
    if job is None or caller.owner_filter not in (None, job.owner_id):
        return None
    return job


def forget(job_id: uuid.UUID) -> None:
    """After a change this app made (a cancel, a retry): the next read goes to the database."""
    current_app.extensions.get("zolve.status_cache", {}).pop(job_id, None)
