"""The `zolve` command line: run the service (up, api, worker, migrate, keys), talk to it (submit, status,
wait, cancel, jobs) and solve a puzzle in-process with no service at all (solve)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from zolve.config import Settings

DEFAULT_URL = "http://127.0.0.1:8000"


def _read_json(value: str) -> Any:
    """JSON text, or @path to a JSON file."""
    text = Path(value[1:]).read_text() if value.startswith("@") else value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}") from exc


def _print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def _server_settings(start_embedded: bool = True) -> tuple[Settings, Any]:
    """Settings with database and broker URLs. Without configured URLs: the servers of a `zolve up`
    running on the data directory (joined, never stopped), or embedded servers of our own (returned, for
    the caller to stop)."""
    settings = Settings.from_env()
    if settings.database_url and settings.redis_url:
        return settings, None
    if not start_embedded:
        raise click.ClickException(
            "DATABASE_URL and REDIS_URL are not set: export both, or use `zolve up` for embedded servers"
        )
    from zolve.embedded import open_embedded

    try:
        stack, services = open_embedded(settings.data_dir)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    database_url = settings.database_url or stack.database_url
    return settings.with_urls(database_url, settings.redis_url or stack.redis_url), services


@click.group()
@click.version_option(package_name="zolve")
def main() -> None:
    """zolve: board-game puzzles solved with Z3, as a job service."""


# -- running the service -------------------------------------------------------------------------
@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=2, show_default=True, type=int, help="solver processes")
@click.option("--api-workers", default=2, show_default=True, type=int, help="gunicorn processes")
@click.option(
    "--data-dir", type=click.Path(path_type=Path), help="where embedded data lives [ZOLVE_DATA_DIR]"
)
def up(host: str, port: int, workers: int, api_workers: int, data_dir: Path | None) -> None:
    """Run everything on this machine: PostgreSQL, Redis, migrations, the API and the workers.

    Uses DATABASE_URL / REDIS_URL when set, embedded servers under the data directory otherwise.
    Ctrl-C stops it all; the next `zolve up` reuses the data."""
    from zolve.embedded import own_embedded
    from zolve.supervisor import run_stack

    if data_dir is not None:
        os.environ["ZOLVE_DATA_DIR"] = str(data_dir)
    settings, services = Settings.from_env(), None
    if not (settings.database_url and settings.redis_url):
        try:
            services = own_embedded(settings.data_dir)
        except RuntimeError as exc:
            raise click.ClickException(str(exc)) from exc
        database_url, redis_url = services.urls
        settings = settings.with_urls(settings.database_url or database_url, settings.redis_url or redis_url)
    sys.exit(run_stack(settings, services, host=host, port=port, workers=workers, api_workers=api_workers))


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--workers", default=2, show_default=True, type=int, help="gunicorn processes")
@click.option("--threads", default=8, show_default=True, type=int, help="threads per process")
def api(host: str, port: int, workers: int, threads: int) -> None:
    """Serve the REST API under gunicorn (needs DATABASE_URL and REDIS_URL)."""
    from zolve.servers import serve_api

    settings, _ = _server_settings(start_embedded=False)
    serve_api(settings, host=host, port=port, workers=workers, threads=threads)


@main.command()
@click.option("--concurrency", default=2, show_default=True, type=int, help="solver processes")
@click.option("--pool", default="prefork", show_default=True, type=click.Choice(["prefork", "solo"]))
@click.option("--loglevel", default="INFO", show_default=True)
def worker(concurrency: int, pool: str, loglevel: str) -> None:
    """Run a Celery worker (needs DATABASE_URL and REDIS_URL)."""
    from zolve.servers import serve_worker

    settings, _ = _server_settings(start_embedded=False)
    serve_worker(settings, concurrency=concurrency, pool=pool, loglevel=loglevel)


@main.command()
def migrate() -> None:
    """Create or upgrade the database schema (Alembic)."""
    from store.migrate import upgrade

    settings, services = _server_settings()
    try:
        upgrade(settings.database_url)
        click.echo("database is at the latest revision")
    finally:
        if services:
            services.stop()


@main.group()
def keys() -> None:
    """Manage API keys."""


@keys.command("create")
@click.option("--admin", is_flag=True, help="the key sees and manages every job")
@click.option("--name", default="cli", show_default=True)
def keys_create(admin: bool, name: str) -> None:
    """Create an API key and print it. It is shown only this once; only its hash is stored."""
    from store import keys as key_store

    with _key_session() as session:
        new = key_store.create_key(session, name=name, is_admin=admin)
    click.echo(new.key)


@keys.command("list")
def keys_list() -> None:
    """List the API keys: id, name, the key's first characters, admin or not, created, revoked."""
    from store import keys as key_store

    with _key_session() as session:
        rows = key_store.list_keys(session)
        click.echo(f"{'id':>5}  {'name':<20} {'prefix':<11} {'admin':<5}  {'created':<19}  revoked")
        for row in rows:
            revoked = f"{row.revoked_at:%Y-%m-%d %H:%M:%S}" if row.revoked_at else "-"
            click.echo(
                f"{row.id:>5}  {row.name[:20]:<20} {row.prefix:<11} {'yes' if row.is_admin else 'no':<5}"
                f"  {row.created_at:%Y-%m-%d %H:%M:%S}  {revoked}"
            )


@keys.command("revoke")
@click.argument("key_id", type=int)
def keys_revoke(key_id: int) -> None:
    """Revoke the key KEY_ID (see `zolve keys list`). Running API processes stop accepting it within
    10 seconds (they cache keys that briefly); its jobs are kept."""
    from store import keys as key_store

    with _key_session() as session:
        row = key_store.revoke_key(session, key_id)
        if row is None:
            raise click.ClickException(f"there is no key {key_id}: `zolve keys list` shows them")
        click.echo(f"key {row.id} ({row.name}, {row.prefix}…) revoked at {row.revoked_at:%Y-%m-%d %H:%M:%S}")


@contextmanager
def _key_session() -> Iterator[Any]:
    """A database session on the configured (or embedded) database, committed on success."""
    from store.db import Database
    from store.migrate import upgrade

    settings, services = _server_settings()
    try:
        upgrade(settings.database_url)  # a data directory where `zolve up` never ran has no tables yet
        db = Database(settings.database_url)
        try:
            with db.session() as session:
                yield session
        finally:
            db.dispose()
    finally:
        if services:
            services.stop()


# -- in-process solving --------------------------------------------------------------------------
@main.command()
@click.argument("kind")
@click.option("--params", "params_text", default="{}", help="JSON, or @file")
@click.option("--time-limit", type=float, default=None, help="seconds (default: the service default)")
@click.option(
    "--boards",
    "rows_file",
    type=click.File("w"),
    default=None,
    help="kinds with rows: also write them (CSV) here",
)
def solve(kind: str, params_text: str, time_limit: float | None, rows_file: Any) -> None:
    """Solve one puzzle in this process (on every core for sharded kinds), with no service, and print
    the result JSON."""
    on_rows = None
    if rows_file is not None:
        rows_file.write("code,board\n")

        def on_rows(spec: Any, params: dict[str, Any], rows: list[int]) -> None:
            rows_file.write("".join(f"{code},{spec.render_row(params, code)}\n" for code in rows))

    _print_json(solve_locally(kind, _read_json(params_text), time_limit, on_rows))


def solve_locally(kind: str, raw_params: Any, time_limit: float | None = None, on_rows: Any = None) -> Any:
    """Validate params (exit 2 with field errors), solve in this process, return the result JSON."""
    from marshmallow import ValidationError

    from puzzles.runtime import Run, Stopped
    from zolve.kinds import KINDS

    spec = KINDS.get(kind)
    if spec is None:
        raise click.ClickException(f"unknown kind {kind!r}; one of: {', '.join(sorted(KINDS))}")
    try:
        params = spec.load_params(raw_params)
    except ValidationError as err:
        click.echo(json.dumps({"errors": {"params": err.messages}}, indent=2), err=True)
        sys.exit(2)
    limit = time_limit or Settings.from_env().default_time_limit
    rows = (lambda codes: on_rows(spec, params, codes)) if on_rows else None
    try:
        with Run(time_limit=limit, on_rows=rows) as run:
            return spec.dump_result(spec.solve_function()(params, run))
    except Stopped as stop:
        raise click.ClickException(str(stop)) from stop


# -- talking to a running service ----------------------------------------------------------------
client_options = [
    click.option("--url", envvar="ZOLVE_URL", default=DEFAULT_URL, show_default=True, help="[ZOLVE_URL]"),
    click.option("--key", envvar="ZOLVE_API_KEY", required=True, help="API key [ZOLVE_API_KEY]"),
]


def with_client(func):
    for option in reversed(client_options):
        func = option(func)
    return func


def _client(url: str, key: str):
    from zolve.client import Client

    return Client(url, key)


progress_every_option = click.option(
    "--progress-every",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="seconds between progress lines on stderr when it is not a terminal (a terminal gets a live line)",
)


@main.command()
@with_client
@click.argument("kind")
@click.option("--params", "params_text", default="{}", help="JSON, or @file")
@click.option("--time-limit", type=float, default=None)
@click.option("--idempotency-key", default=None)
@click.option("--fresh", is_flag=True, help="solve again even if an identical job already succeeded")
@click.option("--wait", "wait_for_it", is_flag=True, help="wait for the result, showing progress on stderr")
@progress_every_option
def submit(
    url: str,
    key: str,
    kind: str,
    params_text: str,
    time_limit: float | None,
    idempotency_key: str | None,
    fresh: bool,
    wait_for_it: bool,
    progress_every: float,
) -> None:
    """Submit a job and print it (or, with --wait, its final state; progress goes to stderr)."""
    client = _client(url, key)
    body: dict[str, Any] = {"kind": kind, "params": _read_json(params_text)}
    if time_limit is not None:
        body["time_limit"] = time_limit
    if fresh:
        body["fresh"] = True
    job = client.submit(body, idempotency_key=idempotency_key)
    _print_json(client.wait(job["id"], every=progress_every) if wait_for_it else job)


@main.command()
@with_client
@click.argument("job_id")
def status(url: str, key: str, job_id: str) -> None:
    """Print a job."""
    _print_json(_client(url, key).get(job_id))


@main.command()
@with_client
@click.argument("job_id")
@click.option("--timeout", type=float, default=None, help="give up after this many seconds")
@progress_every_option
def wait(url: str, key: str, job_id: str, timeout: float | None, progress_every: float) -> None:
    """Wait for a job to finish, showing its progress on stderr, then print it."""
    job = _client(url, key).wait(job_id, timeout=timeout, every=progress_every)
    _print_json(job)
    sys.exit(0 if job["state"] == "succeeded" else 1)


@main.command()
@with_client
@click.argument("job_id")
@click.option("--format", "fmt", type=click.Choice(["csv", "ndjson"]), default="csv", show_default=True)
@click.option("--output", "-o", type=click.File("w"), default="-", help="file (default: standard output)")
def export(url: str, key: str, job_id: str, fmt: str, output: Any) -> None:
    """Stream every stored board of a job (Planet X enumeration) as CSV or NDJSON, with a progress bar."""
    _client(url, key).export(job_id, fmt, output)


@main.command()
@with_client
@click.argument("job_id")
def cancel(url: str, key: str, job_id: str) -> None:
    """Cancel a job."""
    _print_json(_client(url, key).cancel(job_id))


@main.command()
@with_client
@click.option("--state", multiple=True, help="filter (repeatable)")
@click.option("--kind", default=None)
@click.option("--limit", default=20, show_default=True)
@click.option("--all", "all_pages", is_flag=True, help="follow every page")
def jobs(url: str, key: str, state: tuple[str, ...], kind: str | None, limit: int, all_pages: bool) -> None:
    """List your jobs, newest first."""
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "kind", "state", "created", "attempts")
    for job in _client(url, key).iter_jobs(states=state, kind=kind, limit=limit, all_pages=all_pages):
        table.add_row(job["id"], job["kind"], job["state"], job["created_at"], str(job["attempts"]))
    Console().print(table)


def _register_puzzle_commands() -> None:
    from zolve.les_cli import les
    from zolve.planetx_cli import planetx

    main.add_command(planetx)
    main.add_command(les)


_register_puzzle_commands()

if __name__ == "__main__":
    main()
