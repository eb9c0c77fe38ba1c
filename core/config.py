"""Every setting in one place: one declarative model (pydantic), read from the environment (12-factor
style) by pydantic-settings, each variable `ZOLVE_` + the field's name in capitals (`DATABASE_URL` and
`REDIS_URL` without the prefix). A value that is malformed or out of range stops the process at start with
the variable's name (`SettingsError`); an empty variable is as if unset, but for text settings, where
empty means "none" (`ZOLVE_RATE_LIMIT=""`: no limit). `zolve config` prints the settings in effect.

`DATABASE_URL` and `REDIS_URL` select external servers; when they are unset, the embedded PostgreSQL and
Redis under `ZOLVE_DATA_DIR` are used (see `zolve.embedded`).
"""

from __future__ import annotations

import difflib
import ipaddress
import logging
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from limits import parse_many
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticUseDefault
from pydantic_settings import BaseSettings, SettingsConfigDict

from core import tracing

log = logging.getLogger("zolve.config")

#: the prefix of every setting's variable but the two server URLs
PREFIX = "ZOLVE_"
#: a duration that must pass, in seconds
Seconds = Annotated[float, Field(gt=0)]
#: a duration, a size or a count where 0 means "never", "none" or "off" (each field says which)
OrZero = Annotated[float, Field(ge=0)]
#: a count or a size; none is meant to be near the bound, which keeps a mistyped one from going unnoticed
Count = Annotated[int, Field(ge=1, le=2**31 - 1)]
CountOrZero = Annotated[int, Field(ge=0, le=2**31 - 1)]


#: the schemes a broker URL may have, which Celery's transport and the rate limiter's storage both read
#: (`redis+socket` is what `zolve up` gives its workers)
REDIS_SCHEMES = frozenset({"redis", "rediss", "redis+socket"})


class SettingsError(ValueError):
    """The environment holds settings the service cannot start with: one line per variable."""


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, allow_inf_nan=False)

    database_url: str | None = Field(default=None, validation_alias="DATABASE_URL")
    redis_url: str | None = Field(default=None, validation_alias="REDIS_URL")
    data_dir: Path = Path("zolve-data")
    #: seconds a claimed job stays leased without a heartbeat
    lease_seconds: Seconds = 30.0
    #: how often a running job heartbeats, flushes progress and looks for a cancel request
    watch_interval: Seconds = 0.5
    #: how often each worker sweeps expired leases and never-enqueued jobs
    sweep_interval: Seconds = 5.0
    #: a queued job or shard whose wake-up message was sent this long ago and that no worker has claimed
    #: since is sent again (lost-message recovery; the broker's contents are never read)
    requeue_after: Seconds = 120.0
    #: attempts (claims) before a job whose worker keeps dying is failed
    max_attempts: Count = 3
    #: default and maximum solve time per job, in seconds
    default_time_limit: Seconds = 300.0
    max_time_limit: Seconds = 3600.0
    #: a job that asks for at most this many seconds travels on the short lane (its own broker queue),
    #: which some worker processes take alone (`zolve up --short-lane`): a long job can never occupy them,
    #: so a short job waits behind short jobs only; 0 = no short lane
    short_job_seconds: OrZero = 10.0
    #: largest request body the API accepts, in bytes
    max_body_bytes: Count = 256 * 1024
    #: longest `?wait=` long-poll, in seconds
    max_wait_seconds: OrZero = 30.0
    #: per API key: jobs not yet finished (queued or running); a submit past it is refused (429), a batch
    #: making more jobs than it allows at all too (422)
    max_unfinished_per_key: CountOrZero = 10_000
    #: per API key: jobs, and shards, sent to the broker or running at once (the rest wait their turn);
    #: 0 = the live solving worker processes (webhook senders not counted) + 1
    max_in_flight_per_key: CountOrZero = 0
    #: per API process: long-polls waiting at once, and per key; a poll beyond either answers at once.
    #: Under `zolve api` a waiting long-poll holds no thread and no database connection (core.waiting)
    max_waiting: CountOrZero = 1000
    max_waiting_per_key: CountOrZero = 100
    #: per API process: exports being sent at once, and per key (beyond: 429). An export reads its rows
    #: into a spool (export_spool_bytes in memory, the rest in a temporary file) and lets the database go
    #: before it is sent; at most max_export_reads read at once per process, each on one connection
    max_exports: CountOrZero = 32
    max_exports_per_key: CountOrZero = 2
    max_export_reads: Count = 4
    export_spool_bytes: CountOrZero = 1024 * 1024
    #: per API database statement, in seconds: a pathological filter cannot hold PostgreSQL for long
    api_statement_timeout: Seconds = 15.0
    #: Z3's memory ceiling per worker process, in MB (0 = unlimited)
    z3_max_memory_mb: CountOrZero = 4096
    #: recycle a worker pool process after this many jobs (Z3 leaks a little after interrupts)
    max_tasks_per_child: Count = 500
    #: per API key (or address without one), every endpoint but probes and the spec; "" = no limit
    rate_limit: str = "1200 per minute"
    #: per API key, on POST /jobs, on top of rate_limit
    submit_rate_limit: str = "300 per minute"
    #: an API process answers polls of an unfinished job from memory for this long (finished: always)
    status_cache_seconds: OrZero = 1.0
    #: a shard that has run this long hands the rest of its work to a new shard (kinds whose shards are
    #: ranges of games), so that no client's bulk job holds a worker for long; 0 = never
    shard_slice_seconds: OrZero = 3.0
    #: a worker that finishes a shard takes its job's next held shard straight from the table (no
    #: message, no release) for up to this long, unless interactive work waits in the broker; then the
    #: broker's queue, in every client's turn, decides what it runs next. 0 = a message per shard
    shard_chain_seconds: OrZero = 3.0
    #: a result larger than this (JSON bytes) keeps its kind's growing list as rows, paged (0 = never)
    max_result_bytes: CountOrZero = 256 * 1024
    #: a page of a batch's items ends early, after at least one item, once their results come to this many
    #: JSON bytes (identical items share one job and show its result each time); 0 = never
    max_batch_page_bytes: CountOrZero = 4 * 1024 * 1024
    #: finished jobs (results, shards, events, rows) are deleted this many days after they finish; 0 = never
    retention_days: OrZero = 30.0
    #: how often each worker purges what expired (one at a time: they take turns through a lock)
    purge_interval: Seconds = 3600.0
    #: `zolve api` (granian, then zolve.edge) reads a request whole before a thread runs the app: its head
    #: within this long (else the connection is closed), its body within this long (else 408); each write
    #: of an answer must be taken by the client within response_write_seconds (else it is cut off)
    request_header_seconds: Seconds = 10.0
    request_body_seconds: Seconds = 30.0
    response_write_seconds: Seconds = 30.0
    #: per API process: client connections held open at once (granian's backpressure: beyond it, new ones
    #: wait in the listen backlog); a connection that sends no request is closed after
    #: request_header_seconds
    max_connections: Count = 10000
    #: per API process: requests in progress at once, in all and per client address (an IPv6 client's
    #: /64; beyond either: 503). Ten addresses at their cap fill half of the total
    max_requests: Count = 8000
    max_requests_per_address: Count = 400
    #: per API process: how often the memory that requests freed is given back to the system (core.heap:
    #: malloc_trim); 0 = never
    heap_trim_seconds: OrZero = 5.0
    #: signs the admin dashboard's session cookies; unset: see `secret_key_for`
    secret_key: str | None = None
    #: a dashboard session ends after this long without a request, and this long after its login however
    #: busy it is (logout and revoking the key end it at once)
    session_idle_seconds: Seconds = 2 * 3600.0
    session_max_seconds: Seconds = 12 * 3600.0
    #: proxies in front of the API whose X-Forwarded-For/-Proto/-Host/-Port/-Prefix headers are believed
    #: (werkzeug's ProxyFix, that many hops); 0 = none: such headers are ignored, whoever sends them
    trusted_proxies: CountOrZero = 0
    #: Strict-Transport-Security max-age on responses served over HTTPS; 0 = no HSTS header
    hsts_seconds: CountOrZero = 31_536_000
    #: per API process: event streams (SSE) open at once, and per key; beyond: 429. Under `zolve api` a
    #: stream holds a thread only while it reads and writes its events (core.waiting)
    max_streams: CountOrZero = 2000
    max_streams_per_key: CountOrZero = 32
    #: an event stream ends after this long (the client reconnects with Last-Event-ID), and sends a
    #: comment line when idle this long (a vanished client is noticed)
    stream_max_seconds: Seconds = 600.0
    stream_keepalive_seconds: Seconds = 15.0
    #: webhook deliveries: tries before giving up, seconds each may take, back-off base (doubling per
    #: try, at most webhook_backoff_max)
    webhook_max_attempts: Count = 8
    webhook_timeout: Seconds = 10.0
    webhook_backoff: OrZero = 5.0
    webhook_backoff_max: OrZero = 3600.0
    #: networks (CIDRs, comma-separated) a callback URL may resolve into although they are private,
    #: loopback or link-local, e.g. "127.0.0.0/8,::1/128"; "" = none
    webhook_allowed_networks: str = ""

    @field_validator("*", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        """An empty variable is as if unset: the default, but for text settings, where empty is a value."""
        if value == "" and info.field_name and cls.model_fields[info.field_name].annotation is not str:
            raise PydanticUseDefault()
        return value

    @field_validator("rate_limit", "submit_rate_limit")
    @classmethod
    def _rate_limit(cls, value: str) -> str:
        """Flask-Limiter's notation ("300 per minute; 20 per second"), checked now rather than at the first
        request."""
        if value:
            try:
                parse_many(value)
            except ValueError:
                raise ValueError(f"not a rate limit such as '300 per minute': {value!r}") from None
        return value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        scheme = (value or "").partition("://")[0]
        if value and not (scheme in ("postgres", "postgresql") or scheme.startswith("postgresql+")):
            # the value is not shown: it may hold a password
            raise ValueError("not a PostgreSQL URL such as postgresql://user:password@host:5432/zolve")
        return value

    @field_validator("redis_url")
    @classmethod
    def _redis_url(cls, value: str | None) -> str | None:
        if value and value.partition("://")[0] not in REDIS_SCHEMES:
            raise ValueError(
                "not a Redis URL such as redis://:password@host:6379/0 (or rediss://, redis+socket:///path)"
            )
        return value

    @field_validator("webhook_allowed_networks")
    @classmethod
    def _networks(cls, value: str) -> str:
        for cidr in filter(None, (part.strip() for part in value.split(","))):
            ipaddress.ip_network(cidr)  # its ValueError names the network
        return value

    @model_validator(mode="after")
    def _limits_agree(self) -> Settings:
        if self.default_time_limit > self.max_time_limit:
            raise ValueError(
                f"{PREFIX}DEFAULT_TIME_LIMIT ({self.default_time_limit:g}) is over "
                f"{PREFIX}MAX_TIME_LIMIT ({self.max_time_limit:g})"
            )
        if self.sweep_interval >= self.lease_seconds:
            raise ValueError(
                f"{PREFIX}SWEEP_INTERVAL ({self.sweep_interval:g}) is not under {PREFIX}LEASE_SECONDS "
                f"({self.lease_seconds:g}): workers heartbeat every sweep interval, and one silent for a "
                "lease is taken for gone"
            )
        return self

    @classmethod
    def from_env(cls) -> Settings:
        """The settings this process's environment sets, else the defaults; `SettingsError` names each
        variable whose value is malformed or out of range."""
        try:
            settings = _Environment()
        except ValidationError as error:
            raise SettingsError("\n".join(_problems(error))) from None
        try:
            tracing.check_exporters()  # OpenTelemetry's own variable, checked with ours
        except ValueError as error:
            raise SettingsError(str(error)) from None
        return settings

    @property
    def worker_alive_within(self) -> float:
        """A worker process heartbeats every sweep_interval: one silent for three is gone."""
        return 3 * self.sweep_interval

    def with_urls(self, database_url: str, redis_url: str) -> Settings:
        return replace(self, database_url=database_url, redis_url=redis_url)

    def require_database_url(self) -> str:
        """The database's URL, for what needs no broker (a migration, keys, a purge)."""
        if not self.database_url:
            raise RuntimeError(
                "DATABASE_URL is not set; run `zolve up` for the embedded servers or export it"
            )
        return self.database_url

    def require_urls(self) -> tuple[str, str]:
        if not self.database_url or not self.redis_url:
            raise RuntimeError(
                "DATABASE_URL and REDIS_URL are not set; run `zolve up` for the embedded servers "
                "or export both URLs"
            )
        return self.database_url, self.redis_url


class _Environment(Settings, BaseSettings):
    """Settings read from the environment by pydantic-settings."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, frozen=True, extra="ignore")


def variable(field: str) -> str:
    """The environment variable of a setting."""
    alias = Settings.model_fields[field].validation_alias
    return alias if isinstance(alias, str) else PREFIX + field.upper()


def _problems(error: ValidationError) -> list[str]:
    lines = []
    for problem in error.errors(include_url=False):
        field = next((str(part) for part in problem["loc"]), "")
        name = variable(field) if field in Settings.model_fields else field.upper()
        message = problem["msg"].removeprefix("Value error, ")
        # a check of ours names the value itself; pydantic's own messages do not
        named = problem["type"] == "value_error" or isinstance(problem["input"], dict)
        shown = "" if named else f" (got {problem['input']!r})"
        lines.append(f"{name}: {message}{shown}" if name else message)
    return lines


def replace(settings: Settings, **changes: Any) -> Settings:
    """These settings with some changed, validated as the environment's are."""
    return Settings.model_validate({**settings.model_dump(), **changes})


#: variables of zolve's name that are no setting of the model, read elsewhere: the command line's client
#: (ZOLVE_URL, ZOLVE_API_KEY), the kinds' loader (ZOLVE_PLUGINS), the image's build scripts
#: (scripts/image), docker-compose.yml (ZOLVE_PUBLISH_ADDRESS); ZOLVE_TEST_* are the test harness's
OTHER_VARIABLES = frozenset(
    {
        "ZOLVE_URL",
        "ZOLVE_API_KEY",
        "ZOLVE_PLUGINS",
        "ZOLVE_IMAGE",
        "ZOLVE_BUILD_ARGS",
        "ZOLVE_BASE_REBUILD",
        "ZOLVE_PUBLISH_ADDRESS",
    }
)


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """The ZOLVE_* variables of `environ` that no part of zolve reads (ignored, as pydantic-settings
    ignores them), each with the setting it was likely meant for, e.g. "ZOLVE_LEASE_SECOND (meant
    ZOLVE_LEASE_SECONDS?)"."""
    known = {variable(field) for field in Settings.model_fields} | OTHER_VARIABLES
    said = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(PREFIX) or upper in known or upper.startswith(f"{PREFIX}TEST_"):
            continue
        likely = difflib.get_close_matches(upper, sorted(known), n=1)
        said.append(f"{name} (meant {likely[0]}?)" if likely else name)
    return said


#: settings whose value `zolve config` does not show
SECRET = frozenset({"secret_key"})


def shown(settings: Settings) -> dict[str, str]:
    """Each setting's variable and value as `zolve config` prints them: secrets masked, and the password
    of a server URL."""
    values = {}
    for field in Settings.model_fields:
        value = getattr(settings, field)
        if value is None:
            text = ""
        elif field in SECRET:
            text = "(set)"
        elif field in ("database_url", "redis_url"):
            text = _without_password(str(value))
        elif isinstance(value, float) and value.is_integer():
            text = str(int(value))
        else:
            text = str(value)
        values[variable(field)] = text
    return values


def _without_password(url: str) -> str:
    """The URL with its password as `***` (SQLAlchemy's URL parser reads a Redis URL too); as it is when
    it parses as no URL."""
    from sqlalchemy.engine import make_url  # only `zolve config` shows settings: no import at start-up
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


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
