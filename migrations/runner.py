"""Run the Alembic migrations programmatically (`zolve migrate`, `zolve up`, the tests). It lives beside
the migrations, above the store they migrate (env.py reads store.models): the store never imports them."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, create_engine, text

from store.db import Database, normalize_url

MIGRATIONS_DIR = Path(__file__).parent
# serialises concurrent `migrate` runs (several containers starting at once)
_LOCK_ID = 0x5A6F6C7665


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", normalize_url(database_url).replace("%", "%%"))
    return config


@dataclass(frozen=True)
class Upgraded:
    """What an upgrade did: the schema's revision before (None: no schema yet) and after."""

    before: str | None
    after: str | None

    def summary(self) -> str:
        """One line for a person: Alembic's own log says a line per revision."""
        if self.before == self.after:
            return f"database schema up to date ({self.after})"
        return f"database schema upgraded from {self.before or 'nothing'} to {self.after}"


def upgrade(database_url: str, revision: str = "head") -> Upgraded:
    """Upgrade the schema to `revision`, one process at a time (an advisory lock); Alembic's progress is
    logged at debug level only."""
    engine = create_engine(normalize_url(database_url))
    try:
        with engine.connect() as lock_conn, _alembic_quiet():
            lock_conn.execute(text("SELECT pg_advisory_lock(:id)"), {"id": _LOCK_ID})
            try:
                before = _revision(lock_conn)
                command.upgrade(alembic_config(database_url), revision)
                return Upgraded(before, _revision(lock_conn))
            finally:
                lock_conn.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": _LOCK_ID})
                lock_conn.commit()
    finally:
        engine.dispose()


def _revision(connection: Connection) -> str | None:
    revision = MigrationContext.configure(connection).get_current_revision()
    connection.commit()  # the read's transaction ends: the upgrade runs on a connection of its own
    return revision


@contextmanager
def _alembic_quiet() -> Iterator[None]:
    logger = logging.getLogger("alembic")
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


@contextmanager
def migrated(database_url: str) -> Iterator[Database]:
    """The database, upgraded first (a data directory where `zolve up` never ran has no tables yet), for a
    one-off command; disposed after."""
    upgrade(database_url)
    db = Database(database_url)
    try:
        yield db
    finally:
        db.dispose()
