"""Processes that end with the one that started them.

`zolve up` starts its API and workers in process groups of their own (Ctrl-C reaches only it, and it stops
them in order). Killed itself (`kill -9`, the OOM killer), it cannot stop them: they would go on serving
the port and taking jobs, and the next `zolve up` would find them there. Each of its children therefore
watches its parent and stops, as on SIGTERM, once that parent is gone; so does each process of the API
server, whose own parent is the API's main process."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

log = logging.getLogger("zolve.orphans")

#: set by `zolve up` in its children's environment: its own process id
SUPERVISOR_PID = "ZOLVE_SUPERVISOR_PID"

#: how often a process looks at its parent
WATCH_INTERVAL = 1.0
#: how long a process that asked itself to stop has before it is ended
STOP_GRACE = 30.0


def stop_with_parent(parent: int | None = None) -> None:
    """From now on, SIGTERM this process once its parent is no longer `parent` (by default the current
    one): a dead parent's children are handed to init or a subreaper. Past STOP_GRACE it ends: with the
    processes it started (a Celery worker's pool) when it leads their group, as `zolve up`'s children do."""
    watched = os.getppid() if parent is None else parent
    threading.Thread(target=_watch, args=(watched,), name="zolve-parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL)
    log.warning("the process that started this one (pid %d) is gone: stopping", parent)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(STOP_GRACE)
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(1)


def stop_with_supervisor() -> None:
    """stop_with_parent, for a child of `zolve up` (its environment names the supervisor, which started
    it: if its parent is another by now, the supervisor died meanwhile, and it stops at once)."""
    supervisor = os.environ.get(SUPERVISOR_PID, "")
    if supervisor.isdigit():
        stop_with_parent(int(supervisor))
