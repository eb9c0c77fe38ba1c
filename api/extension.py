"""What the app holds for its requests, as one typed object (`zolve(app)`), instead of string-keyed
`app.extensions` entries: the settings, the database, the use cases' context, the broker, the event feed,
the per-key slots and the caches."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cachetools import TTLCache
from flask import Flask, current_app

from api.slots import Slots, Turns
from api.spools import Spools
from core.config import Settings
from services.context import Caller, Context
from store.db import Database
from store.listen import EventFeed

if TYPE_CHECKING:  # the modules that read these import this one
    from celery import Celery
    from flask_limiter import Limiter
    from flask_wtf.csrf import CSRFProtect
    from prometheus_client import CollectorRegistry

    from api.job_cache import JobCache

#: the extension's one key in app.extensions
EXTENSION = "zolve"


@dataclass
class Zolve:
    settings: Settings
    db: Database
    celery: Celery
    context: Context
    events: EventFeed
    #: requests that may wait for a job (`?wait=`), in all and per key
    waiting: Slots
    #: exports being sent at once, in all and per key
    exports: Slots
    #: turns of exports reading their rows (each on a database connection); the exports being sent
    export_reads: Turns
    spools: Spools
    #: event streams open, in all and per key
    streams: Slots
    #: jobs read recently, by id (api.job_cache)
    status_cache: JobCache
    #: callers by their key's hash, with its lock (api.keycache)
    auth_cache: tuple[TTLCache[str, Caller | None], threading.Lock]
    limiter: Limiter | None = None
    csrf: CSRFProtect | None = None
    metrics: CollectorRegistry | None = None

    def close(self) -> None:
        """Let go of what the app holds open (its event feed, its database and broker connections): for
        an app made and dropped within one process, as tests do; a served app lives as long as its process."""
        self.events.close()
        self.db.dispose()
        self.celery.close()


def install(app: Flask, extension: Zolve) -> Zolve:
    app.extensions[EXTENSION] = extension
    return extension


def zolve(app: Flask | None = None) -> Zolve:
    """The app's extension (the current app's, inside a request or an app context)."""
    extension: Zolve = (app or current_app).extensions[EXTENSION]
    return extension
