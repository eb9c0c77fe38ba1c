"""Helpers every `zolve` command shares: JSON in and out, server settings, in-process solving, client
options."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from core.config import Settings

if TYPE_CHECKING:
    from zolve_client import Client

DEFAULT_URL = "http://127.0.0.1:8000"


def read_json(value: str) -> Any:
    """JSON text, or @path to a JSON file."""
    try:
        text = Path(value[1:]).read_text() if value.startswith("@") else value
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {value[1:]}: {getattr(exc, 'strerror', None) or exc}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}") from exc


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False))


class JobId(click.ParamType[str]):
    """A job's whole id (a UUID). Progress lines show only its first 8 characters, which the API cannot
    look up: say so, rather than the API's 404."""

    name = "job_id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return str(uuid.UUID(str(value)))
        except ValueError:
            self.fail(
                f"{value!r} is not a whole job id: give its UUID, as `zolve submit` printed it or "
                "`zolve jobs` lists it (progress lines show only its first 8 characters)",
                param,
                ctx,
            )


def server_settings(start_embedded: bool = True, broker: bool = True) -> tuple[Settings, Any]:
    """Settings with database and broker URLs (`broker=False`: a command that needs the database alone,
    for which DATABASE_URL is enough). Without configured URLs: the servers of a `zolve up` running on the
    data directory (joined, never stopped), or embedded servers of our own (returned, for the caller to
    stop)."""
    settings = Settings.from_env()
    if settings.database_url and (settings.redis_url or not broker):
        return settings, None
    if not start_embedded:
        urls = {"DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}
        unset = [name for name, url in urls.items() if not url]
        raise click.ClickException(
            f"{' and '.join(unset)} {'is' if len(unset) == 1 else 'are'} not set: export DATABASE_URL and"
            " REDIS_URL, or use `zolve up` for embedded servers"
        )
    from zolve.embedded import open_embedded

    try:
        with data_dir_errors(settings.data_dir):
            stack, services = open_embedded(settings.data_dir)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from exc
    database_url = settings.database_url or stack.database_url
    return settings.with_urls(database_url, settings.redis_url or stack.redis_url), services


@contextlib.contextmanager
def data_dir_errors(data_dir: Path) -> Iterator[None]:
    """A data directory that cannot be made, locked or written (a read-only mount, a path through a file,
    a folder not ours) stops the command in one line instead of a traceback."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.filename is None:  # not a file of its own: the servers under it did not start
            raise click.ClickException(
                f"the servers under {data_dir.absolute()} did not start: {exc}"
            ) from exc
        where = "" if Path(exc.filename) == data_dir else f" ({exc.filename})"
        raise click.ClickException(
            f"cannot use the data directory {data_dir.absolute()}: {reason}{where}"
        ) from exc


def joined_settings() -> Settings:
    """Settings with a database URL, for a command that only reads a running service's database: the
    configured one, else the `zolve up`'s running on the data directory (never started here)."""
    settings = Settings.from_env()
    if settings.database_url:
        return settings
    from zolve.embedded import running_stack

    running = running_stack(settings.data_dir)
    if running is None:
        raise click.ClickException(
            f"DATABASE_URL is not set and no zolve up runs on {settings.data_dir.absolute()}:"
            " export it, or pass the --data-dir of a running zolve up"
        )
    return settings.with_urls(running.database_url, running.redis_url)


def _set_data_dir(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    if value is not None:  # every setting is read from the environment (core.config)
        os.environ["ZOLVE_DATA_DIR"] = str(value)
    return value


#: for every command that touches the data directory (embedded PostgreSQL and Redis, keys, secrets)
data_dir_option = click.option(
    "--data-dir",
    type=click.Path(path_type=Path, file_okay=False),
    callback=_set_data_dir,
    expose_value=False,
    is_eager=True,
    help="where embedded data lives [ZOLVE_DATA_DIR, default ./zolve-data]",
)


def summary(job: Mapping[str, Any]) -> str:
    """A finished job in a few lines: id, kind, outcome and timings, the result's top-level values (a
    long one shortened) or the error."""
    from zolve_client import describe_progress

    lines = [f"{job['id']}  {job['kind']}  {describe_progress(job)}"]
    queued, ran = job.get("queued_seconds"), job.get("run_seconds")
    if queued is not None and ran is not None:
        lines.append(f"  queued {queued:.1f} s, ran {ran:.1f} s")
    if job.get("error"):
        lines.append(f"  error: {job['error'].get('type')}: {job['error'].get('message')}")
    for name, value in (job.get("result") or {}).items():
        text = json.dumps(value, ensure_ascii=False)
        lines.append(f"  {name}: {text if len(text) <= 70 else text[:67] + '...'}")
    lines.append(f"  (the whole job: zolve status {job['id']}, or --json)")
    return "\n".join(line for line in lines if line)


def solve_locally(
    kind: str, raw_params: Any, time_limit: float | None = None, on_rows: Any = None
) -> dict[str, Any]:
    """Validate params (exit 2 with field errors), solve in this process, return the result JSON."""
    from marshmallow import ValidationError

    from kinds import KINDS
    from puzzles.runtime import Run, Stopped

    spec = KINDS.get(kind)
    if spec is None:
        raise click.ClickException(f"unknown kind {kind!r}; one of: {', '.join(sorted(KINDS))}")
    try:
        params = spec.load_params(raw_params)
    except ValidationError as err:
        click.echo(json.dumps({"errors": {"params": err.messages}}, indent=2, ensure_ascii=False), err=True)
        sys.exit(2)
    limit = time_limit or local_time_limit(spec)
    if time_limit is None:
        command = click.get_current_context().command_path  # e.g. "zolve planetx deduce"
        click.echo(f"{command}: time limit {limit:g} s (--time-limit to change it)", err=True)
    rows = (lambda codes: on_rows(spec, params, codes)) if on_rows else None
    try:
        with Run(time_limit=limit, on_rows=rows, on_progress=LocalProgress()) as run:
            return spec.dump_result(spec.solve_function()(params, run))
    except Stopped as stop:
        raise click.ClickException(str(stop)) from stop


#: an in-process command shows its progress on stderr at most this often
LOCAL_PROGRESS_SECONDS = 5.0


class LocalProgress:
    """What an in-process solve reports (Run.progress), as the service's progress lines say it, on stderr:
    at most every `every` seconds, the first after that long (a quick solve prints none)."""

    def __init__(self, every: float = LOCAL_PROGRESS_SECONDS) -> None:
        self.every = every
        self.started = self.shown = time.monotonic()

    def __call__(self, fields: Mapping[str, Any]) -> None:
        now = time.monotonic()
        if now - self.shown < self.every:
            return
        self.shown = now
        from zolve_client import describe_progress

        line = describe_progress({"state": "running", "progress": dict(fields)})
        click.echo(f"[{now - self.started:>6.0f} s] {line}", err=True)


def local_time_limit(spec: Any) -> float:
    """In this process nothing else waits for the cores: the kind's own default (e.g. an hour for
    enumerations, whose expert mode takes minutes of CPU) or else the service's maximum, never the
    service's default for shared workers (300 s), which a loaded machine's expert enumeration overran."""
    settings = Settings.from_env()
    return spec.default_time_limit or settings.max_time_limit


F = TypeVar("F", bound=Callable[..., Any])

client_options = [
    click.option("--url", envvar="ZOLVE_URL", default=DEFAULT_URL, show_default=True, help="[ZOLVE_URL]"),
    click.option("--key", envvar="ZOLVE_API_KEY", required=True, help="API key [ZOLVE_API_KEY]"),
]


def with_client(func: F) -> F:
    for option in reversed(client_options):
        func = option(func)
    return func


def make_client(url: str, key: str) -> Client:
    from zolve_client import Client

    return Client(url, key)


progress_every_option = click.option(
    "--progress-every",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="seconds between progress lines on stderr when it is not a terminal (a terminal gets a live line)",
)
