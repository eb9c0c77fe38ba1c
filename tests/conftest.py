"""The real stack for the tests: PostgreSQL, Redis and a Celery worker process.

With DATABASE_URL and REDIS_URL set, the tests use those servers; otherwise they start the embedded
PostgreSQL and Redis (exactly what `zolve up` uses) in a temporary directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from api.extension import zolve
from core.config import Settings, replace
from services.schema import migrate as upgrade
from store import keys
from store.db import Database
from tests import installed
from tests.support import TEST_ENV, ApiServer, WorkerProcess, create_database, drop_database, poll_job

# tests.tiers marks the integration tier (make test-fast leaves it out); tests.order puts the longest
# modules first, for make test's parallel run
pytest_plugins = ["tests.tiers", "tests.order"]

_PRODUCT_HOME = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """The session's one build of the installed product (tests.installed), shared by its processes: made
    by the controlling process, before pytest-xdist starts the workers that inherit its environment."""
    if hasattr(config, "workerinput") or installed.SHARED_HOME in os.environ:
        return
    home = tempfile.mkdtemp(prefix="zolve-installed-")
    os.environ[installed.SHARED_HOME] = config.stash[_PRODUCT_HOME] = home


def pytest_unconfigure(config: pytest.Config) -> None:
    home = config.stash.get(_PRODUCT_HOME, None)
    if home is not None:
        shutil.rmtree(home, ignore_errors=True)
        os.environ.pop(installed.SHARED_HOME, None)


@pytest.fixture(scope="session")
def settings() -> Iterator[Settings]:
    base = Settings.from_env()
    services = None
    if not (base.database_url and base.redis_url):
        from zolve.embedded import EmbeddedServices

        # not under pytest's basetemp root: every pytest session that starts on this machine resets that
        # root to mode 0700, and the embedded PostgreSQL (which runs as its own user when we are root)
        # then loses its data directory mid-run (seen: PANIC on pg_control, "Permission denied")
        services = EmbeddedServices(Path(tempfile.mkdtemp(prefix="zolve-tests-embedded-")))
        base = base.with_urls(services.start_postgres(), services.start_redis())
    upgrade(base.database_url)
    yield replace(
        base,
        lease_seconds=float(TEST_ENV["ZOLVE_LEASE_SECONDS"]),
        watch_interval=float(TEST_ENV["ZOLVE_WATCH_INTERVAL"]),
        sweep_interval=float(TEST_ENV["ZOLVE_SWEEP_INTERVAL"]),
        requeue_after=float(TEST_ENV["ZOLVE_REQUEUE_AFTER"]),
        max_attempts=int(TEST_ENV["ZOLVE_MAX_ATTEMPTS"]),
        webhook_allowed_networks=TEST_ENV["ZOLVE_WEBHOOK_ALLOWED_NETWORKS"],
        webhook_backoff=float(TEST_ENV["ZOLVE_WEBHOOK_BACKOFF"]),
        webhook_timeout=float(TEST_ENV["ZOLVE_WEBHOOK_TIMEOUT"]),
        webhook_max_attempts=int(TEST_ENV["ZOLVE_WEBHOOK_MAX_ATTEMPTS"]),
        # the suite polls hard from a handful of keys; tests/api/test_rate_limits.py checks the limits
        rate_limit="100000 per minute",
        submit_rate_limit="100000 per minute",
    )
    if services is not None:
        services.stop()
        shutil.rmtree(services.data_dir, ignore_errors=True)


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A directory of its own outside pytest's basetemp root, removed after: where a test's `zolve up`
    keeps its embedded PostgreSQL, which a pytest session starting meanwhile would lock out of a
    directory under that root (see `settings`)."""
    path = Path(tempfile.mkdtemp(prefix="zolve-tests-up-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def worker_env(settings: Settings) -> dict[str, str]:
    return {**os.environ, **TEST_ENV, "DATABASE_URL": settings.database_url, "REDIS_URL": settings.redis_url}


@pytest.fixture(scope="session")
def worker(worker_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerProcess]:
    """One real Celery worker process for the session; tests that kill it restart it."""
    process = WorkerProcess(worker_env, tmp_path_factory.mktemp("worker") / "worker.log").start()
    yield process
    process.stop()


@pytest.fixture(scope="session")
def live_api(worker_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    """The API under granian (`zolve api`), on the session's database and broker, for tests of what only
    a real server shows: event streams, the client library."""
    env = {
        **worker_env,
        "ZOLVE_RATE_LIMIT": "",
        "ZOLVE_SUBMIT_RATE_LIMIT": "",
        "ZOLVE_SECRET_KEY": "test",
        # a stream whose client went away gives its thread back within a second or two
        "ZOLVE_STREAM_KEEPALIVE_SECONDS": "1",
    }
    server = ApiServer(env, tmp_path_factory.mktemp("api") / "api.log").start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def db(settings: Settings) -> Iterator[Database]:
    database = Database(settings.database_url)
    yield database
    database.dispose()


@pytest.fixture(scope="session")
def app(settings: Settings):
    import tests.plugins  # noqa: F401 - the test-only kinds the worker loads through ZOLVE_PLUGINS
    from api.app import create_app

    app = create_app(settings)
    yield app
    zolve(app).close()  # before the session's database goes away


@pytest.fixture
def closing() -> Iterator[contextlib.ExitStack]:
    """What a test enters here (a client, a session, an app's close) is closed when the test ends."""
    with contextlib.ExitStack() as stack:
        yield stack


@pytest.fixture
def make_app(settings: Settings, closing: contextlib.ExitStack) -> Callable[..., Flask]:
    """Apps of the session's settings (or `base`) with some changed, each closed when the test ends."""
    from api.app import create_app

    def _make(base: Settings | None = None, **changes: Any) -> Flask:
        app = create_app(replace(base or settings, **changes))
        closing.callback(zolve(app).close)
        return app

    return _make


@pytest.fixture
def client(app):
    return app.test_client()


def _key_maker(db: Database) -> Callable[..., dict[str, str]]:
    def _make(admin: bool = False) -> dict[str, str]:
        with db.session() as session:
            new = keys.create_key(session, name="test", is_admin=admin)
        return {"Authorization": f"Bearer {new.key}"}

    return _make


@pytest.fixture
def make_key(db: Database) -> Callable[..., dict[str, str]]:
    """Authorization headers for a new API key."""
    return _key_maker(db)


@pytest.fixture(scope="module")
def make_key_module(db: Database) -> Callable[..., dict[str, str]]:
    return _key_maker(db)


@pytest.fixture
def auth(make_key: Callable[..., dict[str, str]]) -> dict[str, str]:
    return make_key()


@pytest.fixture
def isolated_db(settings: Settings) -> Iterator[Database]:
    """A fresh, migrated database no worker looks at: store-level tests drive every transition by hand."""
    url = create_database(settings.database_url, "zolve_isolated")
    upgrade(url)
    database = Database(url)
    yield database
    database.dispose()
    drop_database(url)


@pytest.fixture
def wait_job(client) -> Callable[..., dict]:
    def _wait(headers: dict[str, str], job_id: str, timeout: float = 60) -> dict:
        return poll_job(client, headers, job_id, timeout)

    return _wait
