"""Entry points for the long-running processes: the API under gunicorn, and a Celery worker."""

from __future__ import annotations

import gc
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.config import Settings, secret_key_for, unshared_secret_key
from zolve.front import CLIENT_HEADER


class ConfigurationError(RuntimeError):
    """The settings would make a server that misbehaves: it is not started."""


#: unix socket paths are limited to ~107 bytes
_MAX_SOCKET_PATH = 100

#: what gunicorn reads of a request before the app sees it: the request line (method, URL, version; 8,190
#: is gunicorn's largest short of no limit at all), each header field, and how many header fields
REQUEST_LINE_BYTES = 8190
HEADER_FIELD_BYTES = 8190
HEADER_FIELDS = 100
#: how long gunicorn keeps an idle connection from the front: longer than the front keeps one
#: (zolve.front.FrontConfig.upstream_idle_seconds), so that it seldom closes one the front is reusing
UPSTREAM_KEEPALIVE_SECONDS = 75
#: the messages of gunicorn's own refusals, by status (others keep gunicorn's message)
_REFUSALS = {
    414: f"the request line (method, URL and query string) is longer than {REQUEST_LINE_BYTES} bytes",
    431: f"a header is over {HEADER_FIELD_BYTES} bytes, or the request has over {HEADER_FIELDS} headers",
}


def control_socket(settings: Settings, port: int) -> str:
    """This server's own gunicorn control socket: beside its data when there is a data directory, else in
    the temporary directory under its process id. gunicorn's default is one path per user
    ($XDG_RUNTIME_DIR/gunicorn.ctl), which a second `zolve up` on the machine would take over."""
    if settings.data_dir.is_dir():
        path = settings.data_dir.absolute() / f"gunicorn-{port}.ctl"
        if len(str(path)) <= _MAX_SOCKET_PATH:
            return str(path)
    return str(Path(tempfile.gettempdir()) / f"zolve-gunicorn-{os.getpid()}-{port}.ctl")


def gunicorn_options(
    settings: Settings, *, host: str, port: int, workers: int, threads: int, upstream: str | None = None
) -> dict[str, Any]:
    """gunicorn's settings; given `upstream` (a unix socket), it listens there behind zolve.front, which
    keeps its connections open between requests."""
    behind_front = {"keepalive": UPSTREAM_KEEPALIVE_SECONDS} if upstream else {}
    return {
        **behind_front,
        "control_socket": control_socket(settings, port),
        "bind": f"unix:{upstream}" if upstream else f"{host}:{port}",
        "workers": workers,
        "worker_class": "gthread",
        # event streams hold a thread each, at most max_streams: on top of the threads everything else
        # (probes above all) is served by
        "threads": threads + settings.max_streams,
        # long-polls (`?wait=`) hold a thread for up to max_wait_seconds
        "timeout": int(settings.max_wait_seconds) + 30,
        "graceful_timeout": 10,
        # the front writes the access log (zolve.access_log), its own refusals in it too; a record written
        # here would cost gunicorn's threads about 130 µs per request (bench/api_load.py)
        "accesslog": None,
        # gunicorn would believe X-Forwarded-Proto from 127.0.0.1 by itself: the app's ProxyFix decides
        # alone, from ZOLVE_TRUSTED_PROXIES (api.security)
        "forwarded_allow_ips": "",
        "limit_request_line": REQUEST_LINE_BYTES,
        "limit_request_field_size": HEADER_FIELD_BYTES,
        "limit_request_fields": HEADER_FIELDS,
        "post_worker_init": freeze_loaded_heap,
    }


class ClientAddress:
    """The app's REMOTE_ADDR from the header in which zolve.front names each request's client
    (zolve.front.CLIENT_HEADER; the front removes a client's own). It is believed because gunicorn
    listens on a unix socket in a private directory, which only the front reaches."""

    ENVIRON_KEY = "HTTP_" + CLIENT_HEADER.decode().upper().replace("-", "_")

    def __init__(self, app: Any) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        address = environ.pop(self.ENVIRON_KEY, None)
        if address:
            environ["REMOTE_ADDR"] = address
        return self.app(environ, start_response)


def freeze_loaded_heap(_worker: object = None) -> None:
    """Keep what a worker holds once its app is loaded (modules, the app, its schemas: about 140,000
    objects that live as long as the process) out of the garbage collector's full passes,
    which then scan only what requests made. Measured under bench/api_load.py: each API process ran a
    full pass of 90-130 ms every few seconds, stalling all of its requests at once; frozen, 3-20 ms."""
    gc.collect()
    gc.freeze()


def json_refusal(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's answer to a request it refuses before the app sees it (a URL over its limit: 414, a
    header: 431, a malformed request: 400), in the API's JSON error body instead of an HTML page."""
    from gunicorn import util

    from zolve.front import refusal

    message = _REFUSALS.get(status_int) or mesg or reason
    util.write_nonblock(sock, refusal(status_int, message, reason))


def serve_api(settings: Settings, *, host: str, port: int, workers: int, threads: int) -> None:
    from gunicorn import util
    from gunicorn.app.base import BaseApplication

    from api.app import create_app

    problem = unshared_secret_key(settings, workers)
    if problem:
        raise ConfigurationError(problem)
    # resolved once, before gunicorn forks: every process signs the dashboard's sessions alike
    settings = replace(settings, secret_key=secret_key_for(settings))
    upstream = start_front(settings, host, port, capacity=front_capacity(workers, threads))
    options = gunicorn_options(
        settings, host=host, port=port, workers=workers, threads=threads, upstream=upstream
    )
    # the socket's private directory goes with the arbiter (a server hook: gunicorn's workers, forked
    # from it, leave through the same stack and must not remove it)
    options["on_exit"] = lambda _arbiter: shutil.rmtree(Path(upstream).parent, ignore_errors=True)
    # gunicorn has no setting for its error page: its workers write every refusal through this function
    util.write_error = json_refusal

    class _Gunicorn(BaseApplication):
        def load_config(self) -> None:
            for name, value in options.items():
                self.cfg.set(name, value)

        def load(self) -> Any:
            return ClientAddress(create_app(settings))

    _Gunicorn().run()


#: requests computed at once per CPU the API's processes can use: enough to keep it busy while some wait on
#: PostgreSQL or Redis; more only stretch each other. Measured (bench/api_load.py, 2 processes on 2 cores,
#: clients taking turns in time): 8 places against 16 made submits beside 40 pollers p99 93-120 ms
#: against 140-238, and 1.5x as many, polls alone within 10%
PLACES_PER_CPU = 4


def front_capacity(workers: int, threads: int, cpus: int | None = None) -> int:
    """How many requests the front lets gunicorn compute at once (past it, clients take turns): never
    more than its threads, and PLACES_PER_CPU for each CPU its processes can run on (a process runs on
    one at a time)."""
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(workers * threads, PLACES_PER_CPU * min(workers, cpus)))


def start_front(settings: Settings, host: str, port: int, capacity: int) -> str:
    """Listen on host:port in a process of its own (zolve.front) that reads each request whole before
    passing it to gunicorn; returns the unix socket (in a private directory) gunicorn is to listen on."""
    from zolve import front

    private = Path(tempfile.mkdtemp(prefix="zolve-api-"))  # 0700: only this user reaches gunicorn
    upstream = str(private / "gunicorn.sock")
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    listener = socket.create_server((host, port), family=family, backlog=2048)
    config = front.FrontConfig(
        upstream=upstream,
        header_seconds=settings.request_header_seconds,
        body_seconds=settings.request_body_seconds,
        max_body_bytes=settings.max_body_bytes,
        max_connections=settings.max_connections,
        capacity=capacity,
    )
    process = multiprocessing.get_context("fork").Process(
        target=front.run, args=(listener, config), name="zolve-front", daemon=True
    )
    process.start()
    listener.close()  # the front's now
    threading.Thread(target=_stop_with, args=(process,), name="front-watch", daemon=True).start()
    return upstream


def _stop_with(front: multiprocessing.process.BaseProcess) -> None:
    """Without its front the API serves no one: stop gunicorn too (SIGTERM, graceful), so that whoever
    runs `zolve api` (zolve up, a container) sees it end and starts it again."""
    multiprocessing.connection.wait([front.sentinel])
    os.kill(os.getpid(), signal.SIGTERM)


def serve_worker(
    settings: Settings, *, concurrency: int, pool: str, loglevel: str, queues: str | None = None
) -> None:
    from services.messages import SOLVER_QUEUES, WEBHOOK_QUEUE
    from workers.main import BOOT_ID, create_worker_app

    logging.basicConfig(level=loglevel, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    celery = create_worker_app(settings)
    celery.worker_main(
        [
            "worker",
            f"--loglevel={loglevel}",
            f"--concurrency={concurrency}",
            f"--pool={pool}",
            f"--queues={queues or f'{SOLVER_QUEUES},{WEBHOOK_QUEUE}'}",
            # unique per start: Celery tells workers apart by node name, and so does the dashboard
            f"--hostname=zolve-{BOOT_ID}@%h",
            "--without-gossip",
            "--without-mingle",
        ]
    )
