"""Entry points for the long-running processes: the API under granian, and a Celery worker."""

from __future__ import annotations

import contextlib
import errno
import gc
import logging
import os
import resource
import socket
import sys
from functools import partial

from core import heap
from core.config import Settings, secret_key_for, unshared_secret_key
from zolve.access_log import AccessLog
from zolve.edge import Edge, EdgeConfig
from zolve.orphans import stop_with_parent, stop_with_supervisor


class ConfigurationError(RuntimeError):
    """The settings would make a server that misbehaves: it is not started."""


#: requests computed at once per CPU the API's processes can use: enough to keep it busy while some wait on
#: PostgreSQL or Redis; more only stretch each other (docs/benchmarks.md, "API under load")
PLACES_PER_CPU = 4


def edge_capacity(workers: int, threads: int, cpus: int | None = None) -> int:
    """How many requests each API process lets its app compute at once (past it, its clients take turns):
    never more than its threads, and its share of PLACES_PER_CPU for each CPU the processes can run on."""
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(threads, PLACES_PER_CPU * min(workers, cpus) // workers))


def edge_config(settings: Settings, workers: int, threads: int) -> EdgeConfig:
    return EdgeConfig(
        body_seconds=settings.request_body_seconds,
        max_body_bytes=settings.max_body_bytes,
        max_requests=settings.max_requests,
        max_requests_per_address=settings.max_requests_per_address,
        capacity=edge_capacity(workers, threads),
        write_seconds=settings.response_write_seconds,
        # waiting requests (event streams, long-polls, exports being sent) hold no thread (core.waiting)
        threads=threads,
        trusted_proxies=settings.trusted_proxies,
        own_sockets=True,
    )


def load_edge(config: EdgeConfig) -> Edge:
    """An API process's application (called by granian in each of its worker processes): the Flask app
    made from the environment's settings (zolve.servers.serve_api put the resolved secret key there),
    behind the edge."""
    from api.app import create_app

    stop_with_parent()  # granian's main process: its processes would otherwise outlive a kill -9 of it
    settings = Settings.from_env()
    edge = Edge(create_app(settings), config, AccessLog())
    freeze_loaded_heap()
    heap.keep_trimmed(settings.heap_trim_seconds)
    return edge


def freeze_loaded_heap() -> None:
    """Keep what a worker holds once its app is loaded (modules, the app, its schemas: about 140,000
    objects that live as long as the process) out of the garbage collector's full passes,
    which then scan only what requests made: a full pass stalls all of a process's requests at once
    (docs/benchmarks.md, "API under load")."""
    gc.collect()
    gc.freeze()


def serve_api(settings: Settings, *, host: str, port: int, workers: int, threads: int) -> None:
    """The API under granian: its HTTP/1.1 server (hyper) parses every request, in `workers` processes it
    respawns when one dies, each running zolve.edge and the Flask app in `threads` threads."""
    from granian.constants import HTTPModes, Interfaces, Loops
    from granian.http import HTTP1Settings
    from granian.server import Server

    problem = unshared_secret_key(settings, workers) or address_taken(host, port)
    if problem:
        raise ConfigurationError(problem)
    # resolved once, before the workers start: every process signs the dashboard's sessions alike
    os.environ["ZOLVE_SECRET_KEY"] = secret_key_for(settings)
    start_again_under_api_allocator()
    stop_with_supervisor()
    raise_open_files_limit()
    config = edge_config(settings, workers, threads)
    server = Server(
        "zolve.edge",
        address=host,
        port=port,
        interface=Interfaces.ASGI,
        workers=workers,
        http=HTTPModes.http1,
        websockets=False,
        loop=Loops.uvloop,
        backlog=2048,
        # granian counts connections, not requests: one that sends nothing holds its place until the
        # header deadline, so the cap is high; requests are capped by the edge (503)
        backpressure=max(settings.max_connections, settings.max_requests + 64),
        http1_settings=HTTP1Settings(header_read_timeout=int(settings.request_header_seconds * 1000)),
        log_access=False,  # zolve.edge writes the access log, alone on stdout
        log_dictconfig=GRANIAN_LOGS_TO_STDERR,
        respawn_failed_workers=True,
        respawn_interval=1.0,
        workers_kill_timeout=10,
    )
    server.serve(target_loader=partial(load_edge, config), wrap_loader=False)


def address_taken(host: str, port: int) -> str | None:
    """Why the API cannot have host:port to itself, or None. granian's processes listen with
    SO_REUSEPORT, so a second server on a port another zolve API holds would start and take half its
    requests (another stack's keys, another database): the port must be free first."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except OSError as exc:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    with socket.socket(family, kind, proto) as probe:
        # an old connection's TIME_WAIT owns nothing; a listening socket (SO_REUSEPORT or not) does
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} on {host} is already in use (another zolve, or another program)"
            return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    return None


def start_again_under_api_allocator() -> None:
    """Unless `PYTHONMALLOC` is set (by this restart before, or by an operator's choice): the command line
    this interpreter was started with, again in this process (exec), under core.heap.API_ALLOCATOR, which
    only an interpreter's start reads (granian forks the API's processes from this one)."""
    if os.environ.get("PYTHONMALLOC"):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, {**os.environ, "PYTHONMALLOC": heap.API_ALLOCATOR})


_STDERR_HANDLER = {"formatter": "generic", "class": "logging.StreamHandler", "stream": "ext://sys.stderr"}
#: granian's own messages (started, respawned) go to stderr with every other message (stdout is the access
#: log), and so do the app's (root): each with its time and logger, as the workers' lines are
GRANIAN_LOGS_TO_STDERR = {
    "formatters": {"generic": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": _STDERR_HANDLER, "access": _STDERR_HANDLER},
    "root": {"handlers": ["console"], "level": "WARNING"},
}


def raise_open_files_limit() -> None:
    """Each client connection is a file: the soft limit (often 1,024) up to the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(
                resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard)
            )


def serve_worker(
    settings: Settings, *, concurrency: int, pool: str, loglevel: str, queues: str | None = None
) -> None:
    from services.messages import QUEUE, SHORT_QUEUE, SOLVER_QUEUES, WEBHOOK_QUEUE
    from workers.main import BOOT_ID, create_worker_app

    logging.basicConfig(level=loglevel, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop_with_supervisor()
    consumed = (queues or f"{SOLVER_QUEUES},{WEBHOOK_QUEUE}").split(",")
    celery = create_worker_app(settings, solves=bool({QUEUE, SHORT_QUEUE} & {q.strip() for q in consumed}))
    celery.worker_main(
        [
            "worker",
            f"--loglevel={loglevel}",
            f"--concurrency={concurrency}",
            f"--pool={pool}",
            f"--queues={','.join(consumed)}",
            # unique per start: Celery tells workers apart by node name, and so does the dashboard
            f"--hostname=zolve-{BOOT_ID}@%h",
            "--without-gossip",
            "--without-mingle",
        ]
    )
