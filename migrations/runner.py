"""Run the Alembic migrations programmatically (`zolve migrate`, `zolve up`, the tests). It lives beside
the migrations, above the store they migrate (env.py reads store.models): the store never imports them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text

from store.db import Database, normalize_url

MIGRATIONS_DIR = Path(__file__).parent
# serialises concurrent `migrate` runs (several containers starting at once)
_LOCK_ID = 0x5A6F6C7665


def alembic_config(database_url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", normalize_url(database_url).replace("%", "%%"))
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    engine = create_engine(normalize_url(database_url))
    with engine.connect() as lock_conn:
        lock_conn.execute(text("SELECT pg_advisory_lock(:id)"), {"id": _LOCK_ID})
        try:
            command.upgrade(alembic_config(database_url), revision)
        finally:
            lock_conn.execute(text("SELECT pg_advisory_unlock(:id)"), {"id": _LOCK_ID})
            lock_conn.commit()
    engine.dispose()


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
