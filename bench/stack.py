"""A whole zolve service for benchmarks: embedded (or $DATABASE_URL/$REDIS_URL) servers, the API under
granian and a Celery worker, each a real process, as `zolve up` runs them."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from core.config import Settings
from services.schema import migrate as upgrade
from store import keys
from store.db import Database
from zolve.embedded import EmbeddedServices

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Stack:
    def __init__(self, api_workers: int = 2, private: bool = False, env: dict[str, str] | None = None):
        self.api_workers = api_workers
        #: embedded servers of its own even when $DATABASE_URL/$REDIS_URL are set (a bench that kills them)
        self.private = private
        self.extra_env = env or {}
        self.tmp = tempfile.TemporaryDirectory(prefix="zolve-bench-")
        self.services: EmbeddedServices | None = None
        self.children: dict[str, subprocess.Popen] = {}

    def __enter__(self) -> Stack:
        settings = Settings.from_env()
        if settings.database_url and settings.redis_url and not self.private:
            self.database_url, self.redis_url = settings.database_url, settings.redis_url
        else:
            self.services = EmbeddedServices(Path(self.tmp.name))
            self.database_url = self.services.start_postgres()
            self.redis_url = self.services.start_redis()
        upgrade(self.database_url)
        self.db = Database(self.database_url)
        with self.db.session() as session:
            self.key = keys.create_key(session, name="bench", is_admin=True).key
        self.env = {
            **os.environ,
            **self.extra_env,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            # an API of several processes refuses to start without it (core.config.unshared_secret_key)
            "ZOLVE_SECRET_KEY": self.extra_env.get("ZOLVE_SECRET_KEY")
            or os.environ.get("ZOLVE_SECRET_KEY")
            or secrets.token_urlsafe(32),
        }
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._spawn("api", ["api", "--port", str(self.port), "--workers", str(self.api_workers)])
        self._wait(lambda: self._get("/health"), "the API")
        return self

    def new_key(self) -> str:
        """A client key of its own (not an admin's)."""
        with self.db.session() as session:
            return keys.create_key(session, name="bench client").key

    def _spawn(self, name: str, args: list[str]) -> None:
        log = open(Path(self.tmp.name) / f"{name}.log", "ab")  # noqa: SIM115
        self.children[name] = subprocess.Popen(
            [sys.executable, "-m", "zolve", *args],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=ROOT,
        )

    def _get(self, path: str) -> bool:
        try:
            return requests.get(self.url + path, timeout=1).ok
        except requests.RequestException:
            return False

    @staticmethod
    def _wait(predicate, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start")
            time.sleep(0.1)

    def start_worker(self, concurrency: int, name: str = "worker", queues: str | None = None) -> None:
        """A `zolve worker` (on `queues`, comma-separated; default: every queue), started and ready."""
        self.stop_worker(name)
        on_queues = ["--queues", queues] if queues else []
        log = Path(self.tmp.name) / f"{name}.log"
        before = log.stat().st_size if log.exists() else 0  # a restarted worker appends to its log
        self._spawn(name, ["worker", "--concurrency", str(concurrency), *on_queues])
        self._wait(lambda: b" ready." in log.read_bytes()[before:], f"the {name}")

    def stop_worker(self, name: str = "worker") -> None:
        self._stop(name)

    def logs(self) -> str:
        """What every process started in this stack has written (a restarted worker's lines included)."""
        return "".join(path.read_text(errors="replace") for path in sorted(Path(self.tmp.name).glob("*.log")))

    def kill(self, name: str) -> None:
        """kill -9 a child and its process group (a worker with its pool), as a crash would."""
        child = self.children.pop(name, None)
        if child and child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()

    def _stop(self, name: str) -> None:
        child = self.children.pop(name, None)
        if child and child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)

    def __exit__(self, *exc: object) -> None:
        for name in list(self.children):
            self._stop(name)
        self.db.dispose()
        if self.services:
            self.services.stop()
        self.tmp.cleanup()


def create_key(db: Database, name: str, admin: bool = False) -> keys.NewKey:
    """A new API key in `db` (an admin's with `admin`): its id and the key."""
    with db.session() as session:
        return keys.create_key(session, name=name, is_admin=admin)


class UpStack:
    """`zolve up` itself (its supervisor, embedded PostgreSQL and Redis, the API, the solver, short-lane and
    webhook workers) in a private data directory, for benches that run the service as users do and break
    what it owns. `zolve` is the command that runs zolve (default: this checkout's)."""

    def __init__(
        self,
        workers: int = 2,
        env: dict[str, str] | None = None,
        zolve: list[str] | None = None,
        keep_logs: Path | None = None,
    ) -> None:
        self.workers, self.extra_env, self.keep_logs = workers, env or {}, keep_logs
        self.zolve = zolve or [sys.executable, "-m", "zolve"]
        self.tmp = tempfile.TemporaryDirectory(prefix="zolve-bench-up-")
        self.data_dir = Path(self.tmp.name) / "data"
        self.log_path = Path(self.tmp.name) / "up.log"
        #: this checkout's zolve runs in it; another (an installed one) outside it
        self.cwd = ROOT if self.zolve[0] == sys.executable else Path(self.tmp.name)
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> UpStack:
        from zolve.embedded import running_stack

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {**os.environ, **self.extra_env, "ZOLVE_DATA_DIR": str(self.data_dir)}
        for name in ("DATABASE_URL", "REDIS_URL"):  # embedded servers of its own, whatever the caller uses
            self.env.pop(name, None)
        command = [*self.zolve, "up", "--port", str(self.port), "--workers", str(self.workers)]
        command += ["--log-file", "-"]  # the children's output with the supervisor's: up.log, up.out
        # its output goes to files: a pipe nobody reads would fill and stall the API's access log
        out = Path(self.tmp.name) / "up.out"
        with open(out, "ab") as stdout, open(self.log_path, "ab") as stderr:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=stdout, stderr=stderr, start_new_session=True, cwd=self.cwd
            )
        try:
            # ZOLVE_API_KEY=... once it is up (its API ready)
            Stack._wait(lambda: self._exited() or b"ZOLVE_API_KEY=" in out.read_bytes(), "zolve up", 120)
            if self.process.poll() is not None:
                raise RuntimeError(f"zolve up exited; log:\n{self.log_path.read_text()[-3000:]}")
            line = next(x for x in out.read_text().splitlines() if x.startswith("ZOLVE_API_KEY="))
            self.key = line.strip().split("=", 1)[1]
            running = running_stack(self.data_dir)
            if running is None:
                raise RuntimeError("zolve up publishes no servers")
            self.database_url, self.redis_url = running.database_url, running.redis_url
            self.db = Database(self.database_url)
            Stack._wait(lambda: self._ready(), "the API")
        except BaseException:
            self._stop()
            raise
        return self

    def _exited(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def _ready(self) -> bool:
        try:
            return requests.get(self.url + "/ready", timeout=2).ok
        except requests.RequestException:
            return False

    def new_key(self, name: str = "bench client") -> str:
        return create_key(self.db, name).key

    def command(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        """`zolve ARGS` on this stack's servers, run to its end, its output captured as text."""
        env = {**self.env, "DATABASE_URL": self.database_url, "REDIS_URL": self.redis_url}
        return subprocess.run(
            [*self.zolve, *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=self.cwd
        )

    def redis_pid(self) -> int:
        return int((self.data_dir / "redis" / "redis.pid").read_text())

    def _stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # the supervisor stops its children, servers last
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def __exit__(self, *exc: object) -> None:
        if hasattr(self, "db"):
            self.db.dispose()
        self._stop()
        if self.keep_logs is not None:  # what the supervisor and its children said
            self.keep_logs.mkdir(parents=True, exist_ok=True)
            for name in ("up.log", "up.out"):
                if (Path(self.tmp.name) / name).exists():
                    shutil.copy(Path(self.tmp.name) / name, self.keep_logs / name)
        self.tmp.cleanup()
