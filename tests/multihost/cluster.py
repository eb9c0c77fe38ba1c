"""A zolve deployment over several hosts on this machine (see tests/multihost/netns.py): PostgreSQL, Redis,
the API and worker hosts each in a network namespace of its own, every one a real process.

- PostgreSQL: a private cluster of Debian's PostgreSQL binaries (initdb, postgres) run as the `postgres`
  user, listening on its host's address with password (SCRAM) logins; the test process reaches it through
  its unix socket only, so no fault made between the hosts ever blinds the test.
- Redis: `redis-server` on its host's address, with a password.
- The API: `python -m zolve api` (granian, 2 processes) on its host's address; the tests talk to it from
  a client host (`Cluster.http`).
- Workers: `python -m zolve worker` on each worker host (tests.support.WorkerProcess).

Everything runs with the short leases and sweeps of tests.support.TEST_ENV.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests import installed
from tests.multihost.netns import (
    SUBNET,
    Host,
    NetnsThread,
    Network,
    remove_stale_namespaces,
    require_namespaces,
)
from tests.support import TEST_ENV, WorkerProcess, job_row, shard_rows, wait_until

PG_PORT = 5432
REDIS_PORT = 6379
API_PORT = 8000
FINAL = ("succeeded", "failed", "cancelled")


def postgres_bin() -> Path:
    """Debian's PostgreSQL server binaries (the newest installed)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("the multi-host tests need Debian's PostgreSQL server (package postgresql)")
    return Path(found[-1]).parent


def as_postgres(*args: str) -> list[str]:
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", *args]


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    text: str

    def json(self) -> Any:
        import json

        return json.loads(self.text)


class Http:
    """HTTP to the API host from a client host's namespace."""

    def __init__(self, thread: NetnsThread, base_url: str):
        self.thread, self.base_url = thread, base_url

    def request(self, method: str, path: str, timeout: float = 30, **kwargs: Any) -> Reply:
        def send() -> Reply:
            import requests

            session = getattr(self.thread.local, "session", None)
            if session is None:
                session = self.thread.local.session = requests.Session()
            response = session.request(method, self.base_url + path, timeout=timeout, **kwargs)
            return Reply(response.status_code, dict(response.headers), response.text)

        return self.thread.call(send, timeout=timeout + 10)

    def get(self, path: str, **kwargs: Any) -> Reply:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Reply:
        return self.request("POST", path, **kwargs)

    def cookies(self) -> dict[str, str]:
        return self.thread.call(lambda: dict(self.thread.local.session.cookies))


class Cluster:
    def __init__(self, workdir: Path, workers: int = 3, concurrency: int = 1):
        self.workdir = workdir
        self.worker_count, self.concurrency = workers, concurrency
        self.network: Network | None = None
        self.workers: dict[str, WorkerProcess] = {}
        self.db: Any = None
        self.api_key = ""
        self._pg_dir: Path | None = None
        self._redis_socket: Path | None = None
        self._pg_password = secrets.token_urlsafe(16)
        self._redis_password = secrets.token_urlsafe(16)
        self.secret_key = secrets.token_urlsafe(32)

    # -- lifecycle ---------------------------------------------------------------------------------
    def __enter__(self) -> Cluster:
        require_namespaces()
        remove_stale_namespaces()
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start(self) -> None:
        net = self.network = Network()
        self.db_host = net.add_host("db", 2)
        self.redis_host = net.add_host("redis", 3)
        self.api_host = net.add_host("api", 4)
        self.client_host = net.add_host("client", 5)
        self.worker_hosts = [net.add_host(f"w{n}", 10 + n) for n in range(1, self.worker_count + 1)]
        self._start_postgres()
        self._start_redis()
        self._migrate()
        self.http = Http(net.client(self.client_host), f"http://{self.api_host.address}:{API_PORT}")
        self.start_api(wait=False)
        for host in self.worker_hosts:
            self.start_worker(host, wait=False)
        self.wait_api()
        for worker in self.workers.values():
            worker.wait_ready(90)

    def close(self) -> None:
        try:
            if self.network is not None:
                self.network.destroy()
        finally:
            if self.db is not None:
                self.db.dispose()
            for path in (self._pg_dir, self._redis_socket.parent if self._redis_socket else None):
                if path is not None:
                    shutil.rmtree(path, ignore_errors=True)

    # -- PostgreSQL --------------------------------------------------------------------------------
    @property
    def database_url(self) -> str:
        return f"postgresql://zolve:{self._pg_password}@{self.db_host.address}:{PG_PORT}/zolve"

    @property
    def socket_url(self) -> str:
        return f"postgresql+psycopg://zolve@/zolve?host={self._pg_dir / 'run'}&port={PG_PORT}"

    def _start_postgres(self) -> None:
        bindir = postgres_bin()
        postgres = pwd.getpwnam("postgres")
        # a short path (the unix socket's is limited) that the postgres user can reach
        self._pg_dir = Path(tempfile.mkdtemp(prefix="zmh-pg-"))
        (self._pg_dir / "run").mkdir()
        os.chmod(self._pg_dir, 0o755)
        for path in (self._pg_dir, self._pg_dir / "run"):
            os.chown(path, postgres.pw_uid, postgres.pw_gid)
        data = self._pg_dir / "data"
        password_file = self._pg_dir / "password"
        password_file.write_text(self._pg_password + "\n")
        os.chown(password_file, postgres.pw_uid, postgres.pw_gid)
        subprocess.run(
            as_postgres(
                str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--pwfile", str(password_file),
                "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-sync",
            ),
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        with open(data / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {SUBNET}.0/24 scram-sha-256\n")
        settings = {
            "listen_addresses": self.db_host.address,
            "port": str(PG_PORT),
            "unix_socket_directories": str(self._pg_dir / "run"),
            "max_connections": "200",
            "fsync": "off",
            "synchronous_commit": "off",
            "full_page_writes": "off",
            "logging_collector": "off",
            "log_timezone": "UTC",
            # who wrote what: every data-changing statement with the address it came from
            "log_statement": "mod",
            "log_line_prefix": "%m [%p] %h ",
        }
        args = [str(bindir / "postgres"), "-D", str(data)]
        for name, value in settings.items():
            args += ["-c", f"{name}={value}"]
        self.db_host.spawn(as_postgres(*args), self.postgres_log)
        wait_until(self._postgres_up, 60, 0.2, "PostgreSQL to accept connections")
        password = self._pg_password.replace("'", "''")
        self._psql(f"CREATE ROLE zolve LOGIN PASSWORD '{password}'")
        self._psql("CREATE DATABASE zolve OWNER zolve")

    @property
    def postgres_log(self) -> Path:
        return self.workdir / "postgres.log"

    def _psql(self, sql: str, database: str = "postgres") -> str:
        done = subprocess.run(
            ["psql", "-h", str(self._pg_dir / "run"), "-p", str(PG_PORT), "-U", "postgres", "-d", database,
             "-v", "ON_ERROR_STOP=1", "-Atc", sql],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"psql {sql!r}: {done.stderr}")
        return done.stdout

    def _postgres_up(self) -> bool:
        self._check_alive(self.db_host, "PostgreSQL", self.postgres_log)
        with contextlib.suppress(RuntimeError):
            return self._psql("SELECT 1").strip() == "1"
        return False

    def _migrate(self) -> None:
        from migrations.runner import upgrade
        from store import keys
        from store.db import Database

        upgrade(self.socket_url)
        self.db = Database(self.socket_url, pool_size=2)
        with self.db.session() as session:
            self.api_key = keys.create_key(session, name="multihost", is_admin=True).key

    # -- Redis -------------------------------------------------------------------------------------
    @property
    def redis_url(self) -> str:
        return f"redis://:{self._redis_password}@{self.redis_host.address}:{REDIS_PORT}/0"

    def _start_redis(self) -> None:
        redis_dir = self.workdir / "redis"
        redis_dir.mkdir()
        self._redis_socket = Path(tempfile.mkdtemp(prefix="zmh-redis-")) / "redis.sock"
        self.redis_host.spawn(
            [
                shutil.which("redis-server") or "redis-server",
                "--bind", self.redis_host.address, "--port", str(REDIS_PORT),
                "--unixsocket", str(self._redis_socket), "--unixsocketperm", "700",
                "--requirepass", self._redis_password,
                "--save", "", "--appendonly", "no", "--dir", str(redis_dir), "--daemonize", "no",
            ],
            self.workdir / "redis.log",
        )  # fmt: skip
        wait_until(self._redis_up, 30, 0.1, "Redis to answer")

    def _redis_up(self) -> bool:
        import redis

        self._check_alive(self.redis_host, "Redis", self.workdir / "redis.log")
        client = redis.Redis(unix_socket_path=str(self._redis_socket), password=self._redis_password)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    # -- the API and the workers -------------------------------------------------------------------
    def env(self, **extra: str) -> dict[str, str]:
        return {
            **os.environ,
            **TEST_ENV,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            # no data directory: nothing is shared between the hosts but the servers and these variables
            "ZOLVE_DATA_DIR": str(self.workdir / "no-such-dir"),
            "ZOLVE_RATE_LIMIT": "",
            "ZOLVE_SUBMIT_RATE_LIMIT": "",
            **extra,
        }

    @property
    def api_log(self) -> Path:
        return self.workdir / "api.log"

    def start_api(self, wait: bool = True) -> None:
        env = self.env(ZOLVE_SECRET_KEY=self.secret_key)
        product = installed.product()
        args = product.command("api", "--host", self.api_host.address,
                               "--port", str(API_PORT), "--workers", "2", "--threads", "8")  # fmt: skip
        self.api_host.spawn(args, self.api_log, env=product.env(env), cwd=product.workdir)
        if wait:
            self.wait_api()

    def wait_api(self, timeout: float = 60) -> None:
        def healthy() -> bool:
            self._check_alive(self.api_host, "the API", self.api_log)
            try:
                return self.http.get("/health", timeout=2).status == 200
            except Exception:
                return False

        wait_until(healthy, timeout, 0.2, "the API to answer")

    def start_worker(self, host: Host, wait: bool = True) -> WorkerProcess:
        log = self.workdir / f"{host.role}.log"
        for start in range(2, 100):  # a restarted host logs anew: its readiness is read from its log
            if not log.exists():
                break
            log = self.workdir / f"{host.role}.{start}.log"
        worker = WorkerProcess(self.env(), log, concurrency=self.concurrency, prefix=host.command())
        worker.launch()
        host.processes.append(worker.process)
        self.workers[host.role] = worker
        if wait:
            worker.wait_ready(90)
        return worker

    def _check_alive(self, host: Host, what: str, log: Path) -> None:
        dead = [p for p in host.processes if p.poll() is not None]
        if dead and not any(p.poll() is None for p in host.processes):
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise AssertionError(f"{what} on host {host.role} exited ({dead[-1].returncode}):\n{tail}")

    # -- faults --------------------------------------------------------------------------------------
    def host(self, role: str) -> Host:
        assert self.network is not None
        return self.network.hosts[role]

    def cut(self, host: Host, peer: Host) -> None:
        assert self.network is not None
        self.network.cut(host, peer)

    def heal(self, host: Host, peer: Host) -> None:
        assert self.network is not None
        self.network.heal(host, peer)

    def power_off(self, host: Host) -> None:
        assert self.network is not None
        self.network.power_off(host)

    def power_on(self, host: Host) -> None:
        assert self.network is not None
        self.network.link(host, up=True)

    # -- reading what happened (through PostgreSQL's unix socket: never cut) ------------------------
    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"}

    def submit(self, body: dict[str, Any]) -> str:
        reply = self.http.post("/jobs", json=body, headers=self.headers)
        assert reply.status == 202, reply.text
        return reply.json()["id"]

    def job(self, job_id: str) -> Any:
        return job_row(self.db, job_id)

    def shards(self, job_id: str) -> list[Any]:
        return shard_rows(self.db, job_id)

    def wait_job(self, job_id: str, timeout: float) -> Any:
        return wait_until(
            lambda: (job := self.job(job_id)).state in FINAL and job, timeout, 0.25, f"job {job_id} to finish"
        )

    def board_counts(self, job_id: str) -> tuple[int, int]:
        """(boards its shards stored, distinct codes in its blocks) for a job: a shard stored twice
        counts its boards twice."""
        from store import rows

        with self.db.session() as session:
            return self.job(job_id).rows_done, len(set(rows.keys_stored(session, uuid.UUID(job_id)).tolist()))

    def now(self) -> datetime:
        return datetime.now(UTC)

    def statements_from(self, host: Host, since: datetime) -> list[tuple[datetime, str, str]]:
        """Data-changing statements PostgreSQL received from `host` since then: (when, statement,
        parameters), from its log (log_statement = mod)."""
        found = []
        entry = re.compile(r"^(\S+ \S+) UTC \[(\d+)\] (\S+) (LOG|DETAIL):\s+(.*)$")
        current: list[Any] | None = None
        for line in self.postgres_log.read_text(errors="replace").splitlines():
            match = entry.match(line)
            if match is None:
                if current is not None and not line.startswith("20"):
                    current[1] += " " + line.strip()
                continue
            stamp, _, address, level, message = match.groups()
            if level == "LOG" and message.startswith(("statement:", "execute")):
                when = datetime.fromisoformat(stamp).replace(tzinfo=UTC)
                current = [when, message.split(":", 1)[1].strip(), "", address]
                found.append(current)
            elif level == "DETAIL" and current is not None and message.startswith("parameters:"):
                current[2] = message
            else:
                current = None
        return [(when, sql, params) for when, sql, params, address in found
                if address == host.address and when >= since]  # fmt: skip


def owner_host(lease_owner: str | None) -> str | None:
    """The host in a lease owner's name (host:pid:boot)."""
    return lease_owner.split(":")[0] if lease_owner else None


def time_since(start: float) -> float:
    return round(time.monotonic() - start, 1)
