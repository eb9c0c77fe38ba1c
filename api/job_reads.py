"""A request's reads of jobs through the app's job cache (api.job_cache): a job as this caller may see it,
its rendered answer kept with it, and forgetting it after a change this app made."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Hashable

from api.deps import database
from api.extension import zolve
from api.job_cache import JobCache, Rendered
from services.context import Caller
from services.reads import jobs as stored_jobs
from services.reads.jobs import JobView


def _cache() -> JobCache:
    return zolve().status_cache


def visible_job(job_id: uuid.UUID, caller: Caller, fresh: bool = False) -> JobView | None:
    """The job if this caller may see it; `fresh` reads the database whatever the cache holds."""
    cache = _cache()
    job = None if fresh else cache.get(job_id)
    if job is None:
        job = cache.read(job_id, lambda: stored_jobs.get_job(database(), job_id, None), shared=not fresh)
    if job is None or caller.owner_filter not in (None, job.owner_id):
        return None
    return job


def rendered(job: JobView, view: Hashable, render: Callable[[], bytes]) -> Rendered:
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
