"""A whole zolve service for benchmarks: embedded (or $DATABASE_URL/$REDIS_URL) servers, the API under
gunicorn and a Celery worker, each a real process, as `zolve up` runs them."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from core.config import Settings
from store import keys
from store.db import Database
from store.migrate import upgrade
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
        self._spawn(name, ["worker", "--concurrency", str(concurrency), *on_queues])
        log = Path(self.tmp.name) / f"{name}.log"
        self._wait(lambda: b" ready." in log.read_bytes()[-5000:], f"the {name}")

    def stop_worker(self, name: str = "worker") -> None:
        self._stop(name)
        (Path(self.tmp.name) / f"{name}.log").write_bytes(b"")

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
