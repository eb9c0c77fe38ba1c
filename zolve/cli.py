"""The `zolve` command line: run the service (up, api, worker, migrate, keys), talk to it (submit, status,
wait, cancel, jobs) and solve a puzzle in-process with no service at all (solve)."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click

from core.config import Settings, SettingsError
from zolve.commands.common import (
    JobId,
    data_dir_errors,
    data_dir_option,
    joined_settings,
    make_client,
    print_json,
    progress_every_option,
    read_json,
    server_settings,
    solve_locally,
    summary,
    with_client,
)


class ZolveGroup(click.Group):
    """The `zolve` group: its own commands at once, and the command groups the puzzle kinds name (one per
    family, e.g. `zolve planetx`) only when asked for. Loading them imports every kind (and any
    ZOLVE_PLUGINS module), which a built-in command never needs: `zolve status` stays fast, and a broken
    plugin costs only the kinds' groups, with a warning."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._kind_commands: dict[str, click.Command] | None = None

    def _load_kind_commands(self) -> dict[str, click.Command]:
        """The kinds' groups by name; {} (after one warning line on stderr) if the kinds cannot load."""
        if self._kind_commands is None:
            try:
                from kinds import KINDS, load_attribute

                references = sorted({kind.cli for kind in KINDS.values() if kind.cli})
                commands = [load_attribute(reference) for reference in references]
                self._kind_commands = {command.name: command for command in commands}
            except Exception as exc:  # a bad plugin, say: the built-in commands still work
                self._kind_commands = {}
                reason = " ".join(f"{type(exc).__name__}: {exc}".split())  # one line
                click.echo(f"zolve: warning: the puzzle kinds' commands are unavailable ({reason})", err=True)
        return self._kind_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._load_kind_commands()})

    def invoke(self, ctx: click.Context) -> Any:
        from zolve_client import ApiError

        try:
            return super().invoke(ctx)
        except ApiError as refused:  # the API's message and field messages, without a traceback
            raise click.ClickException(str(refused)) from None
        except SettingsError as invalid:  # each variable that is wrong, and why, without a traceback
            raise click.ClickException(f"the settings are not valid:\n{invalid}") from None
        except Exception as exc:
            if (outage := database_outage(exc)) is None:
                raise
            raise click.ClickException(outage) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return command
        return self._load_kind_commands().get(cmd_name)


def database_outage(exc: BaseException) -> str | None:
    """What to say of a command stopped by a database it could not reach (the driver's first line: where
    it tried, and why), or None for any other error. A command that never touched the database never
    loaded SQLAlchemy: nothing to import for it."""
    if "sqlalchemy" not in sys.modules:
        return None
    from sqlalchemy.exc import OperationalError

    if not isinstance(exc, OperationalError):
        return None
    said = str(exc.orig).strip().splitlines()
    return (
        f"the database is unavailable ({said[0] if said else type(exc.orig).__name__}); retry once it is back"
    )


@click.group(cls=ZolveGroup)
@click.version_option(package_name="zolve")
def main() -> None:
    """zolve: board-game puzzles solved with Z3, as a job service."""


# -- running the service -------------------------------------------------------------------------
@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=2, show_default=True, type=int, help="solver processes")
@click.option("--api-workers", default=2, show_default=True, type=int, help="API processes (granian workers)")
@click.option(
    "--short-lane",
    default=1,
    show_default=True,
    type=click.IntRange(min=0),
    help="processes that run only jobs of at most ZOLVE_SHORT_JOB_SECONDS (0: none)",
)
@click.option(
    "--log-file",
    default=None,
    help="where the API's access log and the workers' logs go [default: DATA_DIR/logs/zolve.log]; "
    "'-': this terminal",
)
@data_dir_option
def up(host: str, port: int, workers: int, api_workers: int, short_lane: int, log_file: str | None) -> None:
    """Run everything on this machine: PostgreSQL, Redis, migrations, the API and the workers.

    Uses DATABASE_URL / REDIS_URL when set, embedded servers under the data directory otherwise.
    Ctrl-C stops it all; the next `zolve up` reuses the data."""
    from zolve.embedded import own_embedded
    from zolve.servers import address_taken
    from zolve.supervisor import run_stack

    if taken := address_taken(host, port):  # before anything starts
        raise click.ClickException(taken)
    settings, services = Settings.from_env(), None
    with data_dir_errors(settings.data_dir):
        if not (settings.database_url and settings.redis_url):
            try:
                services = own_embedded(settings.data_dir)
            except RuntimeError as exc:
                raise click.ClickException(str(exc)) from exc
            database_url, redis_url = services.urls
            settings = settings.with_urls(
                settings.database_url or database_url, settings.redis_url or redis_url
            )
        else:  # it still keeps the dashboard's signing key and the logs: made private, as the servers' is
            settings.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            with contextlib.suppress(PermissionError):  # not ours (a mounted volume): left as it is
                settings.data_dir.chmod(0o700)  # one an older version made with the umask's mode
    sys.exit(
        run_stack(
            settings,
            services,
            host=host,
            port=port,
            workers=workers,
            api_workers=api_workers,
            short_lane=short_lane,
            log_file=None if log_file == "-" else Path(log_file or settings.data_dir / "logs" / "zolve.log"),
        )
    )


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=2, show_default=True, type=int, help="API processes (granian workers)")
@click.option("--threads", default=8, show_default=True, type=int, help="threads per process")
def api(host: str, port: int, workers: int, threads: int) -> None:
    """Serve the REST API under granian (needs DATABASE_URL and REDIS_URL)."""
    from zolve.servers import ConfigurationError, serve_api

    settings, _ = server_settings(start_embedded=False)
    try:
        serve_api(settings, host=host, port=port, workers=workers, threads=threads)
    except ConfigurationError as exc:
        raise click.ClickException(str(exc)) from exc


@main.command()
@click.option("--concurrency", default=2, show_default=True, type=int, help="solver processes")
@click.option("--pool", default="prefork", show_default=True, type=click.Choice(["prefork", "solo"]))
@click.option("--loglevel", default="INFO", show_default=True)
@click.option(
    "--queues",
    default=None,
    help="comma-separated: zolve, zolve.short (solving), zolve.webhooks (deliveries) [default: all three]",
)
def worker(concurrency: int, pool: str, loglevel: str, queues: str | None) -> None:
    """Run a Celery worker (needs DATABASE_URL and REDIS_URL)."""
    from zolve.servers import serve_worker

    settings, _ = server_settings(start_embedded=False)
    serve_worker(settings, concurrency=concurrency, pool=pool, loglevel=loglevel, queues=queues)


@main.command()
@click.argument("role", type=click.Choice(["worker"]))
@data_dir_option
def healthcheck(role: str) -> None:
    """Exit 0 when this host's worker processes heartbeat in PostgreSQL (a container healthcheck or
    liveness probe): those of DATABASE_URL and REDIS_URL, else of the zolve up on the data directory."""
    import socket

    from services.reads.workers import alive_on_host
    from store.db import Database

    settings = joined_settings()
    host, within = socket.gethostname(), settings.worker_alive_within
    db = Database(settings.require_database_url(), pool_size=1)
    try:
        count = alive_on_host(db, host, within)
    except Exception as exc:
        raise click.ClickException(f"cannot read the workers' heartbeats: {exc}") from exc
    finally:
        db.dispose()
    if not count:
        raise click.ClickException(f"no worker process on {host} heartbeated in the last {within:g} s")
    click.echo(f"{count} worker processes on {host} heartbeat")


@main.command()
@data_dir_option
def migrate() -> None:
    """Create or upgrade the database schema (Alembic)."""
    from services.schema import migrate as upgrade

    settings, services = server_settings(broker=False)
    try:
        click.echo(upgrade(settings.require_database_url()).summary())
    finally:
        if services:
            services.stop()


@main.command()
def config() -> None:
    """Print the settings in effect, one VARIABLE=value a line: this environment's values, validated, and
    the defaults (secrets and URL passwords masked). A malformed or out-of-range value is named, and the
    command fails, as every command that reads the settings does."""
    from core.config import shown, unknown_variables

    for name, value in shown(Settings.from_env()).items():
        click.echo(f"{name}={value}")
    for unknown in unknown_variables(os.environ):
        click.echo(f"ignored, no setting of zolve: {unknown}", err=True)


@main.group()
def keys() -> None:
    """Manage API keys."""


_WEIGHT_HELP = (
    "the key's share of the workers against other busy keys' (from 0.01 to 100; a key of weight 3 gets "
    "three times the share of a key of weight 1)"
)
_MAX_IN_FLIGHT_HELP = (
    "at most this many of the key's jobs (and of its shards) sent or running at once, below what its "
    "weight gives (default: no cap of its own)"
)


@keys.command("create")
@data_dir_option
@click.option("--admin", is_flag=True, help="the key sees and manages every job")
@click.option("--name", default="cli", show_default=True)
@click.option("--weight", type=float, default=1.0, show_default=True, help=_WEIGHT_HELP)
@click.option("--max-in-flight", type=int, default=None, help=_MAX_IN_FLIGHT_HELP)
def keys_create(admin: bool, name: str, weight: float, max_in_flight: int | None) -> None:
    """Create an API key and print it. It is shown only this once; only its hash is stored."""
    from services import keys as key_service

    share = key_service.Share(weight, max_in_flight)
    with _key_settings() as settings, _refusal_as_usage():
        new = key_service.create_key(settings, name=name, is_admin=admin, share=share)
    click.echo(new.key)


@keys.command("set")
@data_dir_option
@click.argument("key_id", type=int)
@click.option("--weight", type=float, default=None, help=_WEIGHT_HELP + " [default: unchanged]")
@click.option("--max-in-flight", type=int, default=None, help=_MAX_IN_FLIGHT_HELP + " [default: unchanged]")
@click.option("--no-max-in-flight", is_flag=True, help="drop the key's own cap")
def keys_set(key_id: int, weight: float | None, max_in_flight: int | None, no_max_in_flight: bool) -> None:
    """Change the key KEY_ID's share of the workers (see `zolve keys list`); its next work goes by it."""
    from services import keys as key_service

    if no_max_in_flight and max_in_flight is not None:
        raise click.UsageError("--max-in-flight and --no-max-in-flight contradict each other")
    with _key_settings() as settings, _refusal_as_usage():
        row = key_service.change_share(
            settings, key_id, weight=weight, max_in_flight=max_in_flight, drop_cap=no_max_in_flight
        )
    click.echo(f"key {row.id} ({row.name}): weight {row.weight:g}, max in flight {row.max_in_flight or '-'}")


@keys.command("list")
@data_dir_option
def keys_list() -> None:
    """List the API keys: id, name, the key's first characters, admin or not, weight and cap of work in
    flight, created, revoked."""
    from services import keys as key_service

    with _key_settings() as settings:
        rows = key_service.list_keys(settings)
    heads = f"{'id':>5}  {'name':<20} {'prefix':<11} {'admin':<5} {'weight':>6} {'cap':>4}"
    click.echo(f"{heads}  {'created':<19}  revoked")
    for row in rows:
        revoked = f"{row.revoked_at:%Y-%m-%d %H:%M:%S}" if row.revoked_at else "-"
        click.echo(
            f"{row.id:>5}  {row.name[:20]:<20} {row.prefix:<11} {'yes' if row.is_admin else 'no':<5}"
            f" {row.weight:>6g} {row.max_in_flight or '-':>4}  {row.created_at:%Y-%m-%d %H:%M:%S}  {revoked}"
        )


@contextmanager
def _refusal_as_usage() -> Iterator[None]:
    """A value the service refuses (Invalid, NotFound) ends the command with its message."""
    from services.errors import ServiceError

    try:
        yield
    except ServiceError as refused:
        errors = refused.errors or {}
        named = "; ".join(
            f"--{name.replace('_', '-')} {' '.join(map(str, why))}" for name, why in errors.items()
        )
        raise click.ClickException(named or refused.message) from None


@keys.command("revoke")
@data_dir_option
@click.argument("key_id", type=int)
def keys_revoke(key_id: int) -> None:
    """Revoke the key KEY_ID (see `zolve keys list`). Running API processes stop accepting it within
    10 seconds (they cache keys that briefly); its jobs are kept."""
    from services import keys as key_service

    with _key_settings() as settings, _refusal_as_usage():
        row = key_service.revoke_key(settings, key_id)
    click.echo(f"key {row.id} ({row.name}, {row.prefix}…) revoked at {row.revoked_at:%Y-%m-%d %H:%M:%S}")


@contextmanager
def _key_settings() -> Iterator[Settings]:
    """Settings for the configured (or embedded) database; embedded servers of our own stop after. Says
    on stderr whose database it is: a key made on another data directory than the running service's is
    refused by that service (401), and nothing else would tell."""
    settings, services = server_settings(broker=False)
    click.echo(_whose_database(settings, started_here=services is not None), err=True)
    try:
        yield settings
    finally:
        if services:
            services.stop()


def _whose_database(settings: Settings, started_here: bool) -> str:
    from zolve.embedded import running_stack

    data_dir = settings.data_dir.absolute()
    if started_here:
        return (
            f"no zolve up runs on {data_dir}: its database was opened for this command, and its keys are "
            "for a service run on that directory (a zolve up on another one refuses them: pass --data-dir "
            "DIR, the one it runs on)"
        )
    stack = running_stack(settings.data_dir)
    if stack is not None and stack.database_url == settings.database_url:
        return f"the database of the zolve up on {data_dir} (pid {stack.pid})"
    return "the database of DATABASE_URL"


class Duration(click.ParamType[timedelta]):
    """30d, 12h, 90m or 45s (a plain number is days)."""

    name = "duration"
    UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}

    def convert(self, value: Any, param: Any, ctx: Any) -> timedelta:
        if isinstance(value, timedelta):
            return value
        text = str(value).strip().lower()
        number, unit = (text[:-1], text[-1]) if text[-1:] in self.UNITS else (text, "d")
        try:
            amount = float(number) if number.isascii() else float("nan")
        except ValueError:
            amount = float("nan")
        if not 0 <= amount < 1e6:  # also refuses nan
            self.fail(f"{value!r} is not a duration like 30d, 12h, 90m or 45s", param, ctx)
        return timedelta(seconds=amount * self.UNITS[unit])

    WORDS = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}

    @classmethod
    def spoken(cls, duration: timedelta) -> str:
        """In the largest unit that holds it whole: 30 days, 36 hours, 90 minutes, 2.5 seconds."""
        seconds = duration.total_seconds()
        unit = next((u for u, size in cls.UNITS.items() if seconds and seconds % size == 0), "s")
        return f"{seconds / cls.UNITS[unit]:g} {cls.WORDS[unit]}"


class Moment(click.ParamType[datetime]):
    """A moment in ISO 8601, e.g. 2026-11-29T13:00:00+01:00; one without an offset is in UTC."""

    name = "moment"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            moment = datetime.fromisoformat(value) if str(value).isascii() else None
        except ValueError:
            moment = None
        if moment is None:
            self.fail(f"{value!r} is not a moment like 2026-11-29T13:00:00Z", param, ctx)
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@main.command()
@click.option(
    "--older-than",
    type=Duration(),
    default=None,
    help="purge jobs finished longer ago than this, e.g. 30d, 12h [default: ZOLVE_RETENTION_DAYS days]",
)
@click.option(
    "--finished-before",
    type=Moment(),
    default=None,
    help="purge jobs finished before this moment (ISO 8601; UTC unless it says otherwise)",
)
@click.option("--dry-run", is_flag=True, help="only count what would be purged")
@data_dir_option
def purge(older_than: timedelta | None, finished_before: datetime | None, dry_run: bool) -> None:
    """Delete finished jobs older than the retention age, with their results, shards, events, boards and
    batches (the workers do this every ZOLVE_PURGE_INTERVAL seconds too). The newest complete enumeration
    of each Planet X mode is kept whatever its age, and so are rows a kept job still reads."""
    from migrations.runner import migrated
    from services import retention

    if older_than is not None and finished_before is not None:
        raise click.UsageError("give --older-than or --finished-before, not both")
    settings, services = server_settings(broker=False)
    if finished_before is None:
        if older_than is None:
            if settings.retention_days <= 0:
                raise click.ClickException("ZOLVE_RETENTION_DAYS is 0 (keep forever): give --older-than")
            older_than = timedelta(days=settings.retention_days)
        finished_before = datetime.now(UTC) - older_than
    try:
        with migrated(settings.require_database_url()) as db:
            report = retention.purge_finished_before(db, finished_before, dry_run=dry_run)
    finally:
        if services:
            services.stop()
    verb = "would purge" if dry_run else "purged"
    when = (
        f"more than {Duration.spoken(older_than)} ago"
        if older_than
        else f"before {finished_before.isoformat()}"
    )
    click.echo(
        f"{verb} {report.jobs} jobs finished {when} ({report.rows} rows, {report.shards}"
        f" shards, {report.events} events) and {report.batches} batches; kept {report.kept} expired jobs"
        " that are pinned or whose rows a kept job reads"
    )


@main.command()
@click.option("--output", "-o", type=click.File("w"), default="-", help="file (default: standard output)")
def openapi(output: Any) -> None:
    """Print the OpenAPI document the API serves at /openapi.json, with no server: the app is built with
    this environment's settings and unreachable server addresses (building it connects to nothing)."""
    import json

    from api.app import openapi_document

    try:
        document = openapi_document(Settings.from_env())
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    output.write(json.dumps(document, indent=2, sort_keys=True) + "\n")


# -- in-process solving --------------------------------------------------------------------------
@main.command()
@click.argument("kind")
@click.option("--params", "params_text", default="{}", help="JSON, or @file")
@click.option(
    "--time-limit",
    type=float,
    default=None,
    help="seconds (default: the kind's own, else the service's maximum: nothing else shares the cores)",
)
@click.option(
    "--rows",
    "--boards",
    "rows_file",
    type=click.File("w"),
    default=None,
    help="kinds that store rows (Planet X: boards): also write them here as CSV",
)
def solve(kind: str, params_text: str, time_limit: float | None, rows_file: Any) -> None:
    """Solve one puzzle in this process (on every core for sharded kinds), with no service, and print
    the result JSON."""
    on_rows = None
    if rows_file is not None:
        from kinds import KINDS

        spec = KINDS.get(kind)
        if spec is None:
            rows_file.write("code\n")
        elif spec.rows is None:
            raise click.BadParameter(f"{kind} jobs store no rows", param_hint="--rows")
        else:
            rows_file.write(f"code,{spec.rows.item}\n")

        def on_rows(spec: Any, params: dict[str, Any], rows: list[Any]) -> None:
            from kinds.base import csv_cell

            pairs = ((row, None) if isinstance(row, int) else row for row in rows)
            rows_file.write("".join(f"{k},{csv_cell(spec.render_row(params, k, p))}\n" for k, p in pairs))

    print_json(solve_locally(kind, read_json(params_text), time_limit, on_rows))


# -- talking to a running service ----------------------------------------------------------------
@main.command()
@with_client
@click.argument("kind")
@click.option("--params", "params_text", default="{}", help="JSON, or @file")
@click.option("--time-limit", type=float, default=None)
@click.option(
    "--priority",
    type=click.IntRange(-100, 100),
    default=0,
    show_default=True,
    help="which of your waiting jobs goes first (higher first)",
)
@click.option(
    "--queue-timeout", type=float, default=None, help="seconds it may wait to start, else it expires"
)
@click.option("--idempotency-key", default=None)
@click.option(
    "--fresh",
    is_flag=True,
    help="solve again even if an identical job of yours already succeeded (only kinds that reuse results,"
    " such as planetx.enumerate, look for one)",
)
@click.option("--callback-url", default=None, help="POST the final state there (signed webhook)")
@click.option("--wait", "wait_for_it", is_flag=True, help="wait for the result, showing progress on stderr")
@click.option("--json", "as_json", is_flag=True, help="with --wait: print the whole final job as JSON")
@progress_every_option
def submit(
    url: str,
    key: str,
    kind: str,
    params_text: str,
    time_limit: float | None,
    priority: int,
    queue_timeout: float | None,
    idempotency_key: str | None,
    fresh: bool,
    callback_url: str | None,
    wait_for_it: bool,
    as_json: bool,
    progress_every: float,
) -> None:
    """Submit a job and print it; with --wait, wait for it (progress on stderr) and print a summary of
    its outcome (--json: the whole job). Exits 1 when a waited-for job did not succeed."""
    client = make_client(url, key)
    job = client.submit(
        kind,
        read_json(params_text),
        time_limit=time_limit,
        priority=priority,
        queue_timeout=queue_timeout,
        fresh=fresh,
        callback_url=callback_url,
        idempotency_key=idempotency_key,
    )
    if not wait_for_it:
        print_json(job)
        return
    job = client.wait(job["id"], every=progress_every, show_progress=True)
    if as_json:
        print_json(job)
    else:
        click.echo(summary(job))
    sys.exit(0 if job["state"] == "succeeded" else 1)


@main.command()
@with_client
@click.argument("job_id", type=JobId())
def status(url: str, key: str, job_id: str) -> None:
    """Print a job."""
    print_json(make_client(url, key).get(job_id))


@main.command()
@with_client
@click.argument("job_id", type=JobId())
@click.option("--timeout", type=float, default=None, help="give up after this many seconds")
@progress_every_option
def wait(url: str, key: str, job_id: str, timeout: float | None, progress_every: float) -> None:
    """Wait for a job to finish, showing its progress on stderr, then print it."""
    job = make_client(url, key).wait(job_id, timeout=timeout, every=progress_every, show_progress=True)
    print_json(job)
    sys.exit(0 if job["state"] == "succeeded" else 1)


@main.command()
@with_client
@click.argument("job_id", type=JobId())
@click.option("--format", "fmt", type=click.Choice(["csv", "ndjson"]), default="csv", show_default=True)
@click.option("--output", "-o", type=click.File("w"), default="-", help="file (default: standard output)")
def export(url: str, key: str, job_id: str, fmt: str, output: Any) -> None:
    """Stream every stored row of a job (a Planet X enumeration's boards) as CSV or NDJSON, with a progress
    bar: the export the job links to."""
    make_client(url, key).export(job_id, fmt, output, show_progress=True)


@main.command()
@with_client
@click.argument("job_id", type=JobId())
def cancel(url: str, key: str, job_id: str) -> None:
    """Cancel a job."""
    print_json(make_client(url, key).cancel(job_id))


@main.command()
@with_client
@click.option("--state", multiple=True, help="filter (repeatable)")
@click.option("--kind", multiple=True, help="filter (repeatable)")
@click.option("--limit", default=20, show_default=True, help="at most this many")
@click.option("--all", "all_pages", is_flag=True, help="every one (no --limit)")
def jobs(
    url: str, key: str, state: tuple[str, ...], kind: tuple[str, ...], limit: int, all_pages: bool
) -> None:
    """List your jobs, newest first: a table on a terminal, tab-separated lines otherwise (ids whole
    either way)."""
    columns = ("id", "kind", "state", "created", "attempts")
    most = None if all_pages else limit
    pages = make_client(url, key).iter_jobs(states=state, kind=kind, page_size=min(most or 100, 100))
    found = itertools.islice(pages, most)
    rows = [(job["id"], job["kind"], job["state"], job["created_at"], str(job["attempts"])) for job in found]
    if not sys.stdout.isatty():
        click.echo("\t".join(columns))
        for row in rows:
            click.echo("\t".join(row))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(*columns)
    table.columns[0].no_wrap, table.columns[0].min_width = True, 36  # an id is never cut
    for row in rows:
        table.add_row(*row)
    Console().print(table)


if __name__ == "__main__":
    main()
