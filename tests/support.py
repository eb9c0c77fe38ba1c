"""Helpers the tests share: real worker processes, fresh databases, polling."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, func, make_url, select, text

from core.states import FINAL_STATES
from store.db import normalize_url
from tests import installed

ROOT = Path(__file__).resolve().parent.parent

# short leases and fast sweeps so failure tests finish in seconds
TEST_ENV = {
    "ZOLVE_LEASE_SECONDS": "3",
    "ZOLVE_WATCH_INTERVAL": "0.2",
    "ZOLVE_SWEEP_INTERVAL": "0.5",
    "ZOLVE_REQUEUE_AFTER": "10",
    "ZOLVE_MAX_ATTEMPTS": "3",
    # recycle pool processes often: forks then happen while the worker is busy, as in production
    "ZOLVE_MAX_TASKS_PER_CHILD": "10",
    "ZOLVE_PLUGINS": "tests.plugins",
    # webhooks: receivers the tests start on loopback, retried quickly, given up on soon (but not so soon
    # that a receiver in a busy test process answers too late: tests/security/test_webhook_tarpit.py
    # sets a shorter timeout of its own)
    "ZOLVE_WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8",
    "ZOLVE_WEBHOOK_BACKOFF": "0.2",
    "ZOLVE_WEBHOOK_TIMEOUT": "5",
    "ZOLVE_WEBHOOK_MAX_ATTEMPTS": "3",
}


def wait_until(predicate: Callable[[], Any], timeout: float, interval: float = 0.1, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")
        time.sleep(interval)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def installed_popen(
    args: Sequence[str], env: dict[str, str] | None = None, prefix: Sequence[str] = (), **popen: Any
) -> subprocess.Popen:
    """`zolve ARGS` from the installed product (tests/installed.py), run from outside the checkout with the
    test-only kinds importable; `prefix` runs it through another command (e.g. `ip netns exec NS`)."""
    product = installed.product()
    return subprocess.Popen(
        [*prefix, *product.command(*args)], env=product.env(env), cwd=product.workdir, **popen
    )


def _logged_to(log: Any) -> dict[str, Any]:
    """Popen arguments for a server child: output to `log`, in a process group of its own (see stop_group)."""
    return {"stdout": log, "stderr": subprocess.STDOUT, "start_new_session": True}


def run_installed(
    args: Sequence[str], env: dict[str, str] | None = None, timeout: float = 120, **run: Any
) -> subprocess.CompletedProcess:
    """Run `zolve ARGS` from the installed product to its end, its output captured as text."""
    product = installed.product()
    return subprocess.run(
        product.command(*args),
        env=product.env(env),
        cwd=product.workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        **run,
    )


class WorkerProcess:
    """A real `zolve worker` (Celery) subprocess in its own process group, so kill -9 takes it all."""

    def __init__(
        self,
        env: dict[str, str],
        log_path: Path,
        concurrency: int = 2,
        pool: str = "prefork",
        prefix: Sequence[str] = (),
        queues: str | None = None,
    ):
        self.env, self.log_path, self.concurrency, self.pool = env, log_path, concurrency, pool
        #: the queues it consumes (`zolve worker --queues`); None: the default, every queue
        self.queues = queues
        #: a command that runs the worker, e.g. in a network namespace (it must exec the worker in the end)
        self.prefix = list(prefix)
        self.process: subprocess.Popen | None = None

    def start(self) -> WorkerProcess:
        self.launch()
        return self.wait_ready()

    def launch(self) -> WorkerProcess:
        """Start the process without waiting for it to be ready (see wait_ready)."""
        queues = ["--queues", self.queues] if self.queues else []
        command = ["worker", "--concurrency", str(self.concurrency), "--pool", self.pool, *queues]
        with open(self.log_path, "ab") as log:  # the child writes to a copy of the descriptor
            self.process = installed_popen(command, self.env, prefix=self.prefix, **_logged_to(log))
        return self

    def wait_ready(self, timeout: float = 60) -> WorkerProcess:
        wait_until(self._ready, timeout, 0.2, "the worker to be ready")
        return self

    def _ready(self) -> bool:
        if self.process and self.process.poll() is not None:
            raise AssertionError(f"worker exited early; log:\n{self.log_path.read_text()[-3000:]}")
        return self.log_path.exists() and b" ready." in self.log_path.read_bytes()[-20000:]

    def log_count(self, text: str) -> int:
        """How many times `text` is in the worker's log so far."""
        return self.log_counts([text])[0]

    def log_counts(self, texts: list[str]) -> list[int]:
        """How many times each of `texts` is in the worker's log so far (the log read once)."""
        log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return [log.count(text) for text in texts]

    def kill(self) -> None:
        """kill -9 the worker and its pool processes, as a crash would."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        stop_group(self.process)

    def restart(self) -> None:
        self.kill()
        self.log_path.write_bytes(b"")
        self.start()

    @contextmanager
    def stopped(self) -> Iterator[None]:
        """The worker stopped for the block (what is sent meanwhile waits in the broker), then started."""
        self.stop()
        self.log_path.write_bytes(b"")  # the " ready." that start() waits for is then the new process's
        try:
            yield
        finally:
            self.start()


def create_database(server_url: str, prefix: str) -> str:
    """A new empty database on the same server; returns its URL."""
    url = make_url(normalize_url(server_url))
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    return url.set(database=name).render_as_string(hide_password=False)


def drop_database(database_url: str) -> None:
    url = make_url(database_url)
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{url.database}" WITH (FORCE)'))
    admin.dispose()


def job_row(db, job_id: str) -> Any:
    """A job's row, read fresh."""
    from store.models import Job

    with db.session() as session:
        return session.get(Job, uuid.UUID(job_id))


def shard_rows(db, job_id: str) -> list[Any]:
    """A sharded job's shard rows, read fresh."""
    from store.models import Shard

    with db.session() as session:
        return list(session.scalars(select(Shard).where(Shard.job_id == uuid.UUID(job_id))))


def new_job(db, owner: int, kind: str = "dice", params: dict | None = None) -> Any:
    """A queued job of `owner`, inserted by the store (no API, no broker)."""
    from store import jobs

    with db.session() as session:
        job, _ = jobs.create_job(
            session, owner_id=owner, kind=kind, params=params or {"dice": 3}, time_limit=60
        )
    return job


def sent_ahead(session: Any, job_id: uuid.UUID) -> None:
    """Mark a queued job (inserted by the store, no message) as sent an hour ahead, so that nothing sends
    it while the test runs: one never sent is store.dispatch's to send, and one sent long ago the
    sweep's to send again."""
    from sqlalchemy import func, update

    from store.models import Job

    session.execute(update(Job).where(Job.id == job_id).values(enqueued_at=func.now() + timedelta(hours=1)))


@dataclass
class HeldJob:
    """A running job that no worker sees (claimed by a holder of no worker's name, so the sweeper leaves
    its lease alone) and that ends only when the test says: what a long-poll or a stream waits on."""

    db: Any
    id: uuid.UUID
    headers: dict[str, str]
    holder: str = "a test's holder"

    @classmethod
    def make(cls, db, kind: str = "dice", params: dict | None = None) -> HeldJob:
        from store import jobs, keys

        with db.session() as session:
            owner = keys.create_key(session, name="held job")
            job, _ = jobs.create_job(
                session,
                owner_id=owner.id,
                kind=kind,
                params=params or {"dice": 3, "faces": 6},
                time_limit=60,
            )
            jobs.claim(session, job.id, cls.holder, lease_seconds=300)
        return cls(db, job.id, {"Authorization": f"Bearer {owner.key}"})

    def cancel(self) -> None:
        """End it as cancelled, with its final event, as a worker would."""
        from core.errors import ErrorType, JobError
        from core.states import JobState
        from store import jobs

        with self.db.session() as session:
            stopped = JobError(ErrorType.CANCELLED, "stopped by the test")
            assert jobs.finish(session, self.id, self.holder, state=JobState.CANCELLED, error=stopped)


def shard_states(db, job_id: str) -> dict[str, int]:
    """How many of a job's shards are in each state."""
    from store.models import Shard

    with db.session() as session:
        rows = session.execute(
            select(Shard.state, func.count()).where(Shard.job_id == uuid.UUID(job_id)).group_by(Shard.state)
        ).all()
    return dict(rows)


def poll_job(client, headers: dict[str, str], job_id: str, timeout: float = 60) -> dict:
    """Long-poll a job until it reaches a final state."""

    def finished() -> dict | None:
        job = client.get(f"/jobs/{job_id}?wait=5", headers=headers).get_json()
        return job if job["state"] in FINAL_STATES else None

    return wait_until(finished, timeout, 0, f"job {job_id} to finish")


@dataclass
class PrivateStack:
    """A stack of its own (PostgreSQL, Redis, a worker, an API test client), for tests that stop or
    restart servers without disturbing any other test."""

    services: Any
    settings: Any
    db: Any
    worker: WorkerProcess
    client: Any
    headers: dict[str, str]

    def job(self, job_id: str) -> Any:
        return job_row(self.db, job_id)

    def shards(self, job_id: str) -> list[Any]:
        return shard_rows(self.db, job_id)

    @contextmanager
    def split_workers(self, log_dir: Path, short_lane: int = 0) -> Iterator[WorkerProcess]:
        """Its worker on the solving queues only, beside a one-process worker on the webhook queue and
        (with `short_lane` processes) a worker on the short lane alone, as `zolve up`, compose and
        Kubernetes run them; all started. Yields the webhook worker."""
        from services.messages import SHORT_QUEUE, SOLVER_QUEUES, WEBHOOK_QUEUE

        self.worker.queues = SOLVER_QUEUES
        others = [WorkerProcess(self.worker.env, log_dir / "sender.log", concurrency=1, queues=WEBHOOK_QUEUE)]
        if short_lane:
            lane = WorkerProcess(
                self.worker.env, log_dir / "short.log", concurrency=short_lane, queues=SHORT_QUEUE
            )
            others.append(lane)
        try:
            for worker in (self.worker, *others):
                worker.launch()
            for worker in (self.worker, *others):
                worker.wait_ready()
            yield others[0]
        finally:
            for worker in others:
                worker.stop()

    def restart_redis(self) -> None:
        self.services.stop_redis()
        assert self.services.start_redis() == self.settings.redis_url


@contextmanager
def private_stack(
    settings: Any, data_dir: Path, concurrency: int = 1, env: dict[str, str] | None = None
) -> Iterator[PrivateStack]:
    """Start a PrivateStack (its worker is created, not started; its log goes to data_dir); stop it all
    after. The servers' own data lives outside pytest's basetemp root (see tests/conftest.py: another
    pytest session starting on the machine resets that root to 0700, which the embedded PostgreSQL, run as
    its own user, cannot then reach) and is removed at the end."""
    import tests.plugins  # noqa: F401 - the test-only kinds its worker loads through ZOLVE_PLUGINS
    from api.app import create_app
    from api.extension import zolve
    from core.config import replace
    from services.schema import migrate as upgrade
    from store import keys
    from store.db import Database
    from zolve.embedded import EmbeddedServices

    data_dir.mkdir(parents=True, exist_ok=True)
    servers_dir = Path(tempfile.mkdtemp(prefix="zolve-tests-stack-"))
    services = EmbeddedServices(servers_dir)
    own = replace(settings, database_url=services.start_postgres(), redis_url=services.start_redis())
    upgrade(own.database_url)
    db = Database(own.database_url)
    with db.session() as session:
        key = keys.create_key(session, name="private stack").key
    worker_env = {
        **os.environ,
        **TEST_ENV,
        **(env or {}),
        "DATABASE_URL": own.database_url,
        "REDIS_URL": own.redis_url,
    }
    worker = WorkerProcess(worker_env, data_dir / "worker.log", concurrency=concurrency)
    app = create_app(own)
    try:
        yield PrivateStack(services, own, db, worker, app.test_client(), {"Authorization": f"Bearer {key}"})
    finally:
        worker.stop()
        zolve(app).close()
        db.dispose()
        services.stop()
        shutil.rmtree(servers_dir, ignore_errors=True)


class ApiServer:
    """A real `zolve api` (granian) subprocess on a free port: what clients meet in production (its
    threads, its streams' own threads), unlike the test client or werkzeug's thread per request."""

    def __init__(self, env: dict[str, str], log_path: Path, threads: int = 4):
        self.env, self.log_path, self.threads = env, log_path, threads
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self) -> ApiServer:
        import requests

        command = ["api", "--port", str(self.port), "--workers", "1", "--threads", str(self.threads)]
        with open(self.log_path, "ab") as log:  # the child writes to a copy of the descriptor
            self.process = installed_popen(command, self.env, **_logged_to(log))

        def healthy() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"the API exited early; log:\n{self.log_path.read_text()[-3000:]}")
            try:
                return requests.get(f"{self.url}/health", timeout=1).status_code == 200
            except requests.RequestException:
                return False

        wait_until(healthy, 60, 0.2, "the API to answer")
        return self

    def metric(self, name: str, admin: dict[str, str]) -> float:
        """A sample of the server's /metrics (asked from 127.0.0.1: it counts as that address's request)."""
        import requests
        from prometheus_client.parser import text_string_to_metric_families

        page = requests.get(f"{self.url}/metrics", headers=admin, timeout=10).text
        return next(
            sample.value
            for family in text_string_to_metric_families(page)
            for sample in family.samples
            if sample.name == name
        )

    def stop(self) -> None:
        stop_group(self.process)


def stop_group(process: subprocess.Popen | None) -> None:
    """SIGTERM a child's process group; SIGKILL it if it has not ended within 20 s."""
    if process and process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: datetime


#: how long the receiver's /silent holds a request: past TEST_ENV's ZOLVE_WEBHOOK_TIMEOUT
SILENT_SECONDS = 30.0


@dataclass
class Receiver:
    """A webhook receiver on loopback: /flaky/<name> answers 500 twice and then 200, /silent never
    answers (it holds the request past any delivery's timeout), anything else 200 at once."""

    url: str
    received: list[Received] = field(default_factory=list)
    hits: Counter[str] = field(default_factory=Counter)

    def bodies(self, prefix: str) -> list[dict]:
        return [json.loads(r.body) for r in self.received if r.path.startswith(prefix)]

    def first(self, path: str) -> Received | None:
        return next((r for r in self.received if r.path == path), None)


class QuietHandler(BaseHTTPRequestHandler):
    """http.server's request handler without its log lines, with one call to answer."""

    def answer(
        self, status: int, body: bytes = b"", headers: dict[str, str] | None = None, reason: str | None = None
    ) -> None:
        self.send_response(status, reason)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """A threading HTTP server with this handler on a free loopback port, for the block; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def webhook_receiver() -> Iterator[Receiver]:
    state = Receiver("")

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.received.append(Received(self.path, dict(self.headers), body, datetime.now(UTC)))
            state.hits[self.path] += 1
            if self.path == "/silent":
                time.sleep(SILENT_SECONDS)
            failing = self.path.startswith("/flaky") and state.hits[self.path] <= 2
            self.answer(500 if failing else 200)

    with serving(Handler) as state.url:
        yield state


# -- a dropped answer -----------------------------------------------------------------------------------
class DroppingProxy:
    """A TCP proxy on loopback to `port`: its first connection's request goes through, and the connection
    is dropped as soon as the answer starts to come back, the answer unsent; later connections relay."""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.dropped = threading.Event()
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return  # closed
            self.connections += 1
            relay = self._drop if self.connections == 1 else self._relay
            threading.Thread(target=relay, args=(downstream,), daemon=True).start()

    def _drop(self, downstream: socket.socket) -> None:
        with downstream, socket.create_connection(("127.0.0.1", self.upstream)) as upstream:
            threading.Thread(target=_pump, args=(downstream, upstream), daemon=True).start()
            upstream.recv(1)  # the service has answered: it acted on the request
            downstream.shutdown(socket.SHUT_RDWR)
        self.dropped.set()

    def _relay(self, downstream: socket.socket) -> None:
        with downstream, socket.create_connection(("127.0.0.1", self.upstream)) as upstream:
            threading.Thread(target=_pump, args=(downstream, upstream), daemon=True).start()
            _pump(upstream, downstream)

    def close(self) -> None:
        self.listener.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(1 << 16):
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass  # the other side is gone
