"""Helpers every `zolve` command shares: JSON in and out, server settings, in-process solving, client
options."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from core.config import Settings

DEFAULT_URL = "http://127.0.0.1:8000"


def read_json(value: str) -> Any:
    """JSON text, or @path to a JSON file."""
    text = Path(value[1:]).read_text() if value.startswith("@") else value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}") from exc


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, default=str))


def server_settings(start_embedded: bool = True) -> tuple[Settings, Any]:
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


def solve_locally(kind: str, raw_params: Any, time_limit: float | None = None, on_rows: Any = None) -> Any:
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
        click.echo(json.dumps({"errors": {"params": err.messages}}, indent=2), err=True)
        sys.exit(2)
    limit = time_limit or Settings.from_env().default_time_limit
    rows = (lambda codes: on_rows(spec, params, codes)) if on_rows else None
    try:
        with Run(time_limit=limit, on_rows=rows) as run:
            return spec.dump_result(spec.solve_function()(params, run))
    except Stopped as stop:
        raise click.ClickException(str(stop)) from stop


client_options = [
    click.option("--url", envvar="ZOLVE_URL", default=DEFAULT_URL, show_default=True, help="[ZOLVE_URL]"),
    click.option("--key", envvar="ZOLVE_API_KEY", required=True, help="API key [ZOLVE_API_KEY]"),
]


def with_client(func):
    for option in reversed(client_options):
        func = option(func)
    return func


def make_client(url: str, key: str):
    from zolve.client import Client

    return Client(url, key)


progress_every_option = click.option(
    "--progress-every",
    type=click.FloatRange(min=0),
    default=5.0,
    show_default=True,
    help="seconds between progress lines on stderr when it is not a terminal (a terminal gets a live line)",
)
