"""Every setting in one place, read from the environment (12-factor style).

`DATABASE_URL` and `REDIS_URL` select external servers; when they are unset, the embedded PostgreSQL and
Redis under `ZOLVE_DATA_DIR` are used (see `zolve.embedded`).
"""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass, field, replace
from pathlib import Path

log = logging.getLogger("zolve.config")


def _env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


@dataclass(frozen=True)
class Settings:
    database_url: str | None = None
    redis_url: str | None = None
    data_dir: Path = field(default_factory=lambda: Path("zolve-data"))
    #: seconds a claimed job stays leased without a heartbeat
    lease_seconds: float = 30.0
    #: how often a running job heartbeats, flushes progress and looks for a cancel request
    watch_interval: float = 0.5
    #: how often each worker sweeps expired leases and never-enqueued jobs
    sweep_interval: float = 5.0
    #: a queued job whose wake-up message is older than this is enqueued again (lost-message recovery)
    requeue_after: float = 120.0
    #: attempts (claims) before a job whose worker keeps dying is failed
    max_attempts: int = 3
    #: default and maximum solve time per job, in seconds
    default_time_limit: float = 300.0
    max_time_limit: float = 3600.0
    #: a job that asks for at most this many seconds travels on the short lane (its own broker queue),
    #: which some worker processes take alone (`zolve up --short-lane`): a long job can never occupy them,
    #: so a short job waits behind short jobs only; 0 = no short lane
    short_job_seconds: float = 10.0
    #: largest request body the API accepts, in bytes
    max_body_bytes: int = 256 * 1024
    #: longest `?wait=` long-poll, in seconds
    max_wait_seconds: float = 30.0
    #: per API key: jobs not yet finished (queued or running); a submit past it is refused (429)
    max_unfinished_per_key: int = 10_000
    #: per API key: jobs, and shards, sent to the broker or running at once (the rest wait their turn);
    #: 0 = the live worker processes + 1
    max_in_flight_per_key: int = 0
    #: per API process: long-polls waiting at once, and per key; a poll beyond either answers at once.
    #: Under `zolve api` a waiting long-poll holds no thread and no database connection (core.waiting)
    max_waiting: int = 1000
    max_waiting_per_key: int = 100
    #: per API process: exports being sent at once, and per key (beyond: 429). An export reads its rows
    #: into a spool (export_spool_bytes in memory, the rest in a temporary file) and lets the database go
    #: before it is sent; at most max_export_reads read at once per process, each on one connection
    max_exports: int = 32
    max_exports_per_key: int = 2
    max_export_reads: int = 4
    export_spool_bytes: int = 1024 * 1024
    #: per API database statement, in seconds: a pathological filter cannot hold PostgreSQL for long
    api_statement_timeout: float = 15.0
    #: Z3's memory ceiling per worker process, in MB (0 = unlimited)
    z3_max_memory_mb: int = 4096
    #: recycle a worker pool process after this many jobs (Z3 leaks a little after interrupts)
    max_tasks_per_child: int = 500
    #: per API key (or address without one), every endpoint but probes and the spec; "" = no limit
    rate_limit: str = "1200 per minute"
    #: per API key, on POST /jobs, on top of rate_limit
    submit_rate_limit: str = "300 per minute"
    #: an API process answers polls of an unfinished job from memory for this long (finished: always)
    status_cache_seconds: float = 1.0
    #: a shard that has run this long hands the rest of its work to a new shard (kinds whose shards are
    #: ranges of games), so that no client's bulk job holds a worker for long; 0 = never
    shard_slice_seconds: float = 3.0
    #: a worker that finishes a shard takes its job's next held shard straight from the table (no
    #: message, no release) for up to this long, unless interactive work waits in the broker; then the
    #: broker's queue, in every client's turn, decides what it runs next. 0 = a message per shard
    shard_chain_seconds: float = 3.0
    #: a result larger than this (JSON bytes) keeps its kind's growing list as rows, paged (0 = never)
    max_result_bytes: int = 256 * 1024
    #: finished jobs (results, shards, events, rows) are deleted this many days after they finish; 0 = never
    retention_days: float = 30.0
    #: how often each worker purges what expired (one at a time: they take turns through a lock)
    purge_interval: float = 3600.0
    #: `zolve api` (granian, then zolve.edge) reads a request whole before a thread runs the app: its head
    #: within this long (else the connection is closed), its body within this long (else 408); each write
    #: of an answer must be taken by the client within response_write_seconds (else it is cut off)
    request_header_seconds: float = 10.0
    request_body_seconds: float = 30.0
    response_write_seconds: float = 30.0
    #: per API process: client connections held open at once (granian's backpressure: beyond it, new ones
    #: wait in the listen backlog); a connection that sends no request is closed after
    #: request_header_seconds
    max_connections: int = 10000
    #: per API process: requests in progress at once, in all and per client address (an IPv6 client's
    #: /64; beyond either: 503). Ten addresses at their cap fill half of the total
    max_requests: int = 8000
    max_requests_per_address: int = 400
    #: signs the admin dashboard's session cookies; unset: see `secret_key_for`
    secret_key: str | None = None
    #: a dashboard session ends after this long without a request, and this long after its login however
    #: busy it is (logout and revoking the key end it at once)
    session_idle_seconds: float = 2 * 3600.0
    session_max_seconds: float = 12 * 3600.0
    #: proxies in front of the API whose X-Forwarded-For/-Proto/-Host/-Port/-Prefix headers are believed
    #: (werkzeug's ProxyFix, that many hops); 0 = none: such headers are ignored, whoever sends them
    trusted_proxies: int = 0
    #: Strict-Transport-Security max-age on responses served over HTTPS; 0 = no HSTS header
    hsts_seconds: int = 31_536_000
    #: per API process: event streams (SSE) open at once, and per key; beyond: 429. Under `zolve api` a
    #: stream holds a thread only while it reads and writes its events (core.waiting)
    max_streams: int = 2000
    max_streams_per_key: int = 32
    #: an event stream ends after this long (the client reconnects with Last-Event-ID), and sends a
    #: comment line when idle this long (a vanished client is noticed)
    stream_max_seconds: float = 600.0
    stream_keepalive_seconds: float = 15.0
    #: webhook deliveries: tries before giving up, seconds each may take, back-off base (doubling per
    #: try, at most webhook_backoff_max)
    webhook_max_attempts: int = 8
    webhook_timeout: float = 10.0
    webhook_backoff: float = 5.0
    webhook_backoff_max: float = 3600.0
    #: networks (CIDRs, comma-separated) a callback URL may resolve into although they are private,
    #: loopback or link-local, e.g. "127.0.0.0/8,::1/128"; "" = none
    webhook_allowed_networks: str = ""

    @classmethod
    def from_env(cls) -> Settings:
        defaults = cls()
        return cls(
            database_url=os.environ.get("DATABASE_URL") or None,
            redis_url=os.environ.get("REDIS_URL") or None,
            data_dir=Path(os.environ.get("ZOLVE_DATA_DIR") or defaults.data_dir),
            lease_seconds=_env_float("ZOLVE_LEASE_SECONDS", defaults.lease_seconds),
            watch_interval=_env_float("ZOLVE_WATCH_INTERVAL", defaults.watch_interval),
            sweep_interval=_env_float("ZOLVE_SWEEP_INTERVAL", defaults.sweep_interval),
            requeue_after=_env_float("ZOLVE_REQUEUE_AFTER", defaults.requeue_after),
            max_attempts=_env_int("ZOLVE_MAX_ATTEMPTS", defaults.max_attempts),
            default_time_limit=_env_float("ZOLVE_DEFAULT_TIME_LIMIT", defaults.default_time_limit),
            max_time_limit=_env_float("ZOLVE_MAX_TIME_LIMIT", defaults.max_time_limit),
            short_job_seconds=_env_float("ZOLVE_SHORT_JOB_SECONDS", defaults.short_job_seconds),
            max_body_bytes=_env_int("ZOLVE_MAX_BODY_BYTES", defaults.max_body_bytes),
            max_wait_seconds=_env_float("ZOLVE_MAX_WAIT_SECONDS", defaults.max_wait_seconds),
            max_unfinished_per_key=_env_int("ZOLVE_MAX_UNFINISHED_PER_KEY", defaults.max_unfinished_per_key),
            max_in_flight_per_key=_env_int("ZOLVE_MAX_IN_FLIGHT_PER_KEY", defaults.max_in_flight_per_key),
            max_waiting=_env_int("ZOLVE_MAX_WAITING", defaults.max_waiting),
            max_waiting_per_key=_env_int("ZOLVE_MAX_WAITING_PER_KEY", defaults.max_waiting_per_key),
            max_exports=_env_int("ZOLVE_MAX_EXPORTS", defaults.max_exports),
            max_exports_per_key=_env_int("ZOLVE_MAX_EXPORTS_PER_KEY", defaults.max_exports_per_key),
            max_export_reads=_env_int("ZOLVE_MAX_EXPORT_READS", defaults.max_export_reads),
            export_spool_bytes=_env_int("ZOLVE_EXPORT_SPOOL_BYTES", defaults.export_spool_bytes),
            api_statement_timeout=_env_float("ZOLVE_API_STATEMENT_TIMEOUT", defaults.api_statement_timeout),
            z3_max_memory_mb=_env_int("ZOLVE_Z3_MAX_MEMORY_MB", defaults.z3_max_memory_mb),
            max_tasks_per_child=_env_int("ZOLVE_MAX_TASKS_PER_CHILD", defaults.max_tasks_per_child),
            shard_slice_seconds=_env_float("ZOLVE_SHARD_SLICE_SECONDS", defaults.shard_slice_seconds),
            shard_chain_seconds=_env_float("ZOLVE_SHARD_CHAIN_SECONDS", defaults.shard_chain_seconds),
            max_result_bytes=_env_int("ZOLVE_MAX_RESULT_BYTES", defaults.max_result_bytes),
            retention_days=_env_float("ZOLVE_RETENTION_DAYS", defaults.retention_days),
            purge_interval=_env_float("ZOLVE_PURGE_INTERVAL", defaults.purge_interval),
            rate_limit=os.environ.get("ZOLVE_RATE_LIMIT", defaults.rate_limit),
            submit_rate_limit=os.environ.get("ZOLVE_SUBMIT_RATE_LIMIT", defaults.submit_rate_limit),
            status_cache_seconds=_env_float("ZOLVE_STATUS_CACHE_SECONDS", defaults.status_cache_seconds),
            request_header_seconds=_env_float(
                "ZOLVE_REQUEST_HEADER_SECONDS", defaults.request_header_seconds
            ),
            request_body_seconds=_env_float("ZOLVE_REQUEST_BODY_SECONDS", defaults.request_body_seconds),
            response_write_seconds=_env_float(
                "ZOLVE_RESPONSE_WRITE_SECONDS", defaults.response_write_seconds
            ),
            max_connections=_env_int("ZOLVE_MAX_CONNECTIONS", defaults.max_connections),
            max_requests=_env_int("ZOLVE_MAX_REQUESTS", defaults.max_requests),
            max_requests_per_address=_env_int(
                "ZOLVE_MAX_REQUESTS_PER_ADDRESS", defaults.max_requests_per_address
            ),
            secret_key=os.environ.get("ZOLVE_SECRET_KEY") or None,
            session_idle_seconds=_env_float("ZOLVE_SESSION_IDLE_SECONDS", defaults.session_idle_seconds),
            session_max_seconds=_env_float("ZOLVE_SESSION_MAX_SECONDS", defaults.session_max_seconds),
            trusted_proxies=_env_int("ZOLVE_TRUSTED_PROXIES", defaults.trusted_proxies),
            hsts_seconds=_env_int("ZOLVE_HSTS_SECONDS", defaults.hsts_seconds),
            max_streams=_env_int("ZOLVE_MAX_STREAMS", defaults.max_streams),
            max_streams_per_key=_env_int("ZOLVE_MAX_STREAMS_PER_KEY", defaults.max_streams_per_key),
            stream_max_seconds=_env_float("ZOLVE_STREAM_MAX_SECONDS", defaults.stream_max_seconds),
            stream_keepalive_seconds=_env_float(
                "ZOLVE_STREAM_KEEPALIVE_SECONDS", defaults.stream_keepalive_seconds
            ),
            webhook_max_attempts=_env_int("ZOLVE_WEBHOOK_MAX_ATTEMPTS", defaults.webhook_max_attempts),
            webhook_timeout=_env_float("ZOLVE_WEBHOOK_TIMEOUT", defaults.webhook_timeout),
            webhook_backoff=_env_float("ZOLVE_WEBHOOK_BACKOFF", defaults.webhook_backoff),
            webhook_backoff_max=_env_float("ZOLVE_WEBHOOK_BACKOFF_MAX", defaults.webhook_backoff_max),
            webhook_allowed_networks=os.environ.get(
                "ZOLVE_WEBHOOK_ALLOWED_NETWORKS", defaults.webhook_allowed_networks
            ),
        )

    @property
    def worker_alive_within(self) -> float:
        """A worker process heartbeats every sweep_interval: one silent for three is gone."""
        return 3 * self.sweep_interval

    def with_urls(self, database_url: str, redis_url: str) -> Settings:
        return replace(self, database_url=database_url, redis_url=redis_url)

    def require_urls(self) -> tuple[str, str]:
        if not self.database_url or not self.redis_url:
            raise RuntimeError(
                "DATABASE_URL and REDIS_URL are not set; run `zolve up` for the embedded servers "
                "or export both URLs"
            )
        return self.database_url, self.redis_url


SECRET_KEY_FILE = "secret_key"


def secret_key_for(settings: Settings) -> str:
    """ZOLVE_SECRET_KEY; else a random key kept in the data directory (created by the first process that
    needs it, read by the others), so that sessions survive restarts and every API process on this
    machine signs alike; else, without a data directory, a random key for this process alone."""
    if settings.secret_key:
        return settings.secret_key
    path = settings.data_dir / SECRET_KEY_FILE
    try:
        if settings.data_dir.is_dir():
            if not path.exists():
                _create_exclusively(path, secrets.token_urlsafe(32))
            return path.read_text().strip()
    except OSError as exc:
        log.warning("cannot keep a secret key in %s (%s)", settings.data_dir, exc)
    log.warning(
        "ZOLVE_SECRET_KEY is unset and no data directory holds one: admin sessions last as long as this "
        "process (set ZOLVE_SECRET_KEY when several API processes serve the dashboard)"
    )
    return secrets.token_urlsafe(32)


def unshared_secret_key(settings: Settings, processes: int) -> str | None:
    """Why an API server of `processes` processes must not start with these settings, or None.

    Several processes is how the API is deployed for real (compose, Kubernetes: and then usually on several
    hosts too). Without ZOLVE_SECRET_KEY and without a data directory to keep a key in, its key would be
    random: admin sessions would end at every restart and fail on every other API host. `zolve up` keeps
    its key in its data directory (or hands the one it made to its API), so it passes."""
    if processes <= 1 or settings.secret_key or settings.data_dir.is_dir():
        return None
    return (
        f"ZOLVE_SECRET_KEY is not set: with {processes} API processes, the dashboard's session key would be "
        "made up at start, so admin sessions would end at every restart and be refused by any other API "
        "process or host. Set ZOLVE_SECRET_KEY to one random value shared by every API process (e.g. "
        "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`), or run a single process "
        "(--workers 1)."
    )


def _create_exclusively(path: Path, content: str) -> None:
    """Write the file whole or not at all: a process that loses the race reads the winner's."""
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(content + "\n")
        os.link(draft, path)
    except FileExistsError:
        pass
    finally:
        draft.unlink(missing_ok=True)
