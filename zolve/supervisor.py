"""`zolve up`: migrations, an admin key on first start, then the API and the workers as child processes,
all stopped cleanly (with the embedded servers) on Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import click

from zolve.config import Settings


def _first_admin_key(database_url: str) -> str | None:
    from store import keys
    from store.db import Database

    db = Database(database_url, pool_size=1)
    try:
        with db.session() as session:
            if keys.has_admin(session):
                return None
            return keys.create_key(session, name="admin (zolve up)", is_admin=True).key
    finally:
        db.dispose()


def _spawn(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    # own process group: Ctrl-C reaches only the supervisor, which then stops children in order
    return subprocess.Popen([sys.executable, "-m", "zolve", *args], env=env, start_new_session=True)


def _stop(process: subprocess.Popen, grace: float) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


def run_stack(
    settings: Settings, services: Any, *, host: str, port: int, workers: int, api_workers: int
) -> int:
    from store.migrate import upgrade

    stopping = False

    def _on_signal(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)

    children: list[subprocess.Popen] = []
    try:
        upgrade(settings.database_url)
        admin_key = _first_admin_key(settings.database_url)
        env = {**os.environ, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}
        children.append(_spawn(["worker", "--concurrency", str(workers)], env))
        children.append(
            _spawn(["api", "--host", host, "--port", str(port), "--workers", str(api_workers)], env)
        )
        url = f"http://{host}:{port}"
        click.echo(f"zolve is up at {url}  (API docs: {url}/docs)", err=True)
        click.echo(f"data: {settings.data_dir.absolute() if services else 'external servers'}", err=True)
        if admin_key:
            click.echo(f"admin API key (shown once, keep it): {admin_key}", err=True)
            click.echo(f"ZOLVE_API_KEY={admin_key}")
        click.echo("Ctrl-C stops everything.", err=True)
        while not stopping:
            exited = [c for c in children if c.poll() is not None]
            if exited:
                click.echo(f"a child process exited with code {exited[0].returncode}; stopping", err=True)
                return 1
            time.sleep(0.3)
        return 0
    finally:
        click.echo("stopping...", err=True)
        for child in reversed(children):
            _stop(child, grace=15)
        if services is not None:
            services.stop()
        click.echo("stopped", err=True)
