"""`zolve up`: migrations, an admin key on first start, then the API and the workers as child processes
(a solver worker on the `zolve` and `zolve.short` queues, a short-lane worker on `zolve.short` alone, a
webhook worker on `zolve.webhooks`).

It supervises what it started: an API, a worker, or (embedded) a Redis or PostgreSQL that dies is
started again, with back-off, and logged. After a Redis restart every message the broker held is gone, so
whatever waits for one is marked unsent and the workers' sweeper sends it again at once. Ctrl-C or SIGTERM
stops everything cleanly, the embedded servers last.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import click

from core.config import Settings, secret_key_for
from zolve.orphans import SUPERVISOR_PID

log = logging.getLogger("zolve.supervisor")

#: `zolve up`'s processes that send webhooks (beside the solver processes, never among them)
WEBHOOK_PROCESSES = 2
#: first restart delay, doubled on each failure in a row, capped
FIRST_BACKOFF = 1.0
MAX_BACKOFF = 30.0
#: a child that stays up this long has recovered: its back-off starts over
STABLE_AFTER = 60.0
POLL_INTERVAL = 0.3


def _first_admin_key(database_url: str) -> str | None:
    from services.keys import first_admin_key
    from store.db import Database

    db = Database(database_url, pool_size=1)
    try:
        return first_admin_key(db)
    finally:
        db.dispose()


def _spawn(args: list[str], env: dict[str, str], output: IO[bytes] | None) -> subprocess.Popen[bytes]:
    # own process group: Ctrl-C reaches only the supervisor, which then stops children in order
    return subprocess.Popen(
        [sys.executable, "-m", "zolve", *args],
        env=env,
        start_new_session=True,
        stdout=output,
        stderr=output,
    )


def _stop(process: subprocess.Popen[bytes], grace: float) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


@dataclass
class Child:
    """Something the supervisor keeps running."""

    name: str
    start: Callable[[], None]
    alive: Callable[[], bool]
    stop: Callable[[], None]
    failures: int = 0
    restart_at: float | None = None
    up_since: float = 0.0

    def backoff(self) -> float:
        doubled: float = FIRST_BACKOFF * 2**self.failures  # int ** int is typed Any (a float if negative)
        return min(MAX_BACKOFF, doubled)


class ProcessChild(Child):
    """A `zolve api` or `zolve worker` subprocess."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], output: IO[bytes] | None = None):
        """`output`: where its standard output and error go (None: the supervisor's own)."""
        self.process: subprocess.Popen[bytes] | None = None

        def start() -> None:
            self.process = _spawn(args, env, output)

        def stop() -> None:
            if self.process is not None:
                _stop(self.process, grace=15)

        super().__init__(name, start, lambda: self.process is not None and self.process.poll() is None, stop)

    def exit_code(self) -> int | None:
        return self.process.poll() if self.process is not None else None


def supervise(children: list[Child], now: float) -> None:
    """One round: schedule a restart for each dead child, and restart those whose back-off is over."""
    for child in children:
        if child.alive():
            if child.failures and now - child.up_since > STABLE_AFTER:
                child.failures = 0
            continue
        if child.restart_at is None:
            child.restart_at = now + child.backoff()
            code = child.exit_code() if isinstance(child, ProcessChild) else None
            log.warning(
                "%s died%s; restarting in %.0f s",
                child.name,
                f" (exit code {code})" if code is not None else "",
                child.backoff(),
            )
        elif now >= child.restart_at:
            _restart(child, now)


def _restart(child: Child, now: float) -> None:
    child.failures += 1
    try:
        child.stop()
        child.start()
    except Exception as exc:
        child.restart_at = now + child.backoff()
        log.error("%s could not be restarted (%s); trying again in %.0f s", child.name, exc, child.backoff())
        return
    child.restart_at, child.up_since = None, now
    log.warning("%s restarted", child.name)


def server_children(services: Any) -> list[Child]:
    """The embedded servers, supervised too. A Redis restarted empty needs nothing here: the workers
    find zolve's mark key gone when they reconnect, and have every waiting row sent again
    (workers.main.recover_emptied_broker)."""
    return [
        Child(
            "postgresql",
            start=services.restart_postgres,
            alive=services.postgres_alive,
            stop=lambda: None,
        ),
        Child(
            "redis",
            start=services.start_redis,
            alive=services.redis_alive,
            stop=services.stop_redis,
        ),
    ]


def worker_children(
    settings: Settings, workers: int, short_lane: int, env: dict[str, str], output: IO[bytes] | None = None
) -> list[Child]:
    """The solver worker; the short lane's, when there is one; the webhook worker. Deliveries run on
    processes of their own (a slow receiver never holds a solver process, a long job never holds a delivery
    back), and so do short jobs (a long job never holds one back)."""
    from services.messages import SHORT_QUEUE, SOLVER_QUEUES, WEBHOOK_QUEUE

    def worker(name: str, concurrency: int, queues: str) -> ProcessChild:
        args = ["worker", "--concurrency", str(concurrency), "--queues", queues]
        return ProcessChild(name, args, env, output)

    children = [worker("worker", workers, SOLVER_QUEUES)]
    if short_lane > 0 and settings.short_job_seconds > 0:
        children.append(worker("short-lane", short_lane, SHORT_QUEUE))
    return [*children, worker("webhooks", WEBHOOK_PROCESSES, WEBHOOK_QUEUE)]


def run_stack(
    settings: Settings,
    services: Any,
    *,
    host: str,
    port: int,
    workers: int,
    api_workers: int,
    short_lane: int = 1,
    log_file: Path | None = None,
) -> int:
    """Run the service until Ctrl-C or SIGTERM. The children's output (the access log, the workers' logs)
    goes to `log_file`, or with None where the supervisor's own goes; the supervisor's own lines (what it
    started, restarted, stopped) and the first screen go to its standard error, and the new admin key also
    to its standard output (`ZOLVE_API_KEY=...`, for scripts)."""
    from services.schema import migrate as upgrade

    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pgserver").setLevel(logging.WARNING)  # each pg_ctl command line it runs, at INFO
    stopping = False

    def _on_signal(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)

    children: list[Child] = []
    output = _opened(log_file)
    admin_key, announced = None, False
    try:
        database_url, redis_url = settings.require_urls()
        click.echo(upgrade(database_url).summary(), err=True)
        admin_key = _first_admin_key(database_url)
        env = {
            **os.environ,
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            # the key in the data directory, or one made now: an API process restarted here keeps sessions
            "ZOLVE_SECRET_KEY": secret_key_for(settings),
            SUPERVISOR_PID: str(os.getpid()),  # they stop once it is gone (zolve.orphans)
        }
        api_args = ["api", "--host", host, "--port", str(port), "--workers", str(api_workers)]
        processes = [
            *worker_children(settings, workers, short_lane, env, output),
            ProcessChild("api", api_args, env, output),
        ]
        for child in processes:
            child.start()
        children = (server_children(services) if services else []) + processes
        ready_by = time.monotonic() + READY_WITHIN
        while not stopping:
            supervise(children, time.monotonic())
            if not announced and ((ready := _ready(host, port)) or time.monotonic() > ready_by):
                announced = True
                _first_screen(settings, services, host, port, admin_key, log_file, ready)
            time.sleep(POLL_INTERVAL)
        return 0
    finally:
        if admin_key and not announced:  # stopped before it was up: the key is not lost
            click.echo(f"admin API key (shown once, keep it): {admin_key}", err=True)
            click.echo(f"ZOLVE_API_KEY={admin_key}")
        click.echo("stopping...", err=True)
        for child in reversed(children):
            if isinstance(child, ProcessChild):
                child.stop()
        if services is not None:
            services.stop()
        if output is not None:
            output.close()
        click.echo("stopped", err=True)


#: `zolve up` says it is up once its API answers /ready, or after this long (then saying it is not ready)
READY_WITHIN = 120.0


def _opened(log_file: Path | None) -> IO[bytes] | None:
    """The log file, appended to; made readable by this user only, as its folder when made here (the
    access log holds clients' addresses)."""
    if log_file is None:
        return None
    log_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(log_file, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.fchmod(fd, 0o600)  # one an older version made keeps no wider mode
    return os.fdopen(fd, "ab")


def _ready(host: str, port: int) -> bool:
    """Whether the API answers /ready with 200 (a wildcard address is asked on loopback)."""
    address = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    address = f"[{address}]" if ":" in address else address
    try:
        with urllib.request.urlopen(f"http://{address}:{port}/ready", timeout=2) as answer:
            return bool(answer.status == 200)
    except (OSError, ValueError):  # refused, not yet listening, an error status (HTTPError is an OSError)
        return False


def this_command() -> str:
    """How to run `zolve` again as this process was run: `zolve` when that is the one on PATH, else its
    path (relative below the working directory: `.venv/bin/zolve` after `make up`), or `python -m zolve`."""
    script = Path(sys.argv[0])
    on_path = shutil.which("zolve")
    if on_path is not None and script.exists() and Path(on_path).samefile(script):
        return "zolve"
    command = script if script.name == "zolve" else Path(sys.executable)
    shown = os.path.relpath(command.absolute()) if command.absolute().is_relative_to(Path.cwd()) else command
    return str(shown) if script.name == "zolve" else f"{shown} -m zolve"


def _first_screen(
    settings: Settings,
    services: Any,
    host: str,
    port: int,
    admin_key: str | None,
    log_file: Path | None,
    ready: bool,
) -> None:
    """What a person needs once the service is up: where, the admin key (shown once), what runs, where
    its logs go, how to stop it."""
    url = f"http://{host}:{port}"
    say = functools.partial(click.echo, err=True)
    if ready:
        say(f"zolve is up at {url}  (API docs: {url}/docs, dashboard: {url}/admin)")
    else:
        say(f"zolve is not ready at {url} after {READY_WITHIN:g} s; see the logs below")
    if admin_key:
        say(f"admin API key (shown once, keep it): {admin_key}")
        click.echo(f"ZOLVE_API_KEY={admin_key}")
    if services:
        say(f"more keys: {this_command()} keys create --data-dir {settings.data_dir.absolute()}")
    say(f"data: {settings.data_dir.absolute() if services else 'external servers (DATABASE_URL, REDIS_URL)'}")
    if log_file is not None:
        say(f"logs (API access, workers): {log_file.absolute()}")
    say("Ctrl-C stops everything.")
