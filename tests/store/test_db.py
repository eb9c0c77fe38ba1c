"""The database handle's connections."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text

import store.db
from core.config import Settings
from store.db import Database


def test_connections_carry_tcp_liveness_so_a_partition_fails_them_in_seconds(settings: Settings) -> None:
    db = Database(settings.database_url)
    try:
        with db.engine.connect() as connection:
            params = connection.connection.dbapi_connection.info.get_parameters()
    finally:
        db.dispose()
    assert params["keepalives"] == "1" and params["keepalives_idle"] == "10"
    assert params["tcp_user_timeout"] == "20000"


def test_the_server_ends_the_session_of_a_client_whose_host_vanished(settings: Settings) -> None:
    db = Database(settings.database_url, statement_timeout=15)
    try:
        with db.engine.connect() as connection:
            options = connection.connection.dbapi_connection.info.get_parameters()["options"]
    finally:
        db.dispose()
    assert "-c tcp_keepalives_idle=10" in options and "-c tcp_user_timeout=20000" in options
    assert "-c statement_timeout=15000" in options


def test_a_database_errors_message_holds_no_parameter_value(isolated_db) -> None:
    """An error may be logged whole (log.exception): its statement's values, which may be secrets, are
    not in it."""
    import pytest
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    secret = "whsec_do-not-print-me"
    with pytest.raises(DBAPIError) as failed, isolated_db.session() as session:
        session.execute(text("SELECT CAST(:secret AS text), 1 / 0"), {"secret": secret})
    assert "division by zero" in str(failed.value) and "parameters hidden" in str(failed.value)
    assert secret not in str(failed.value)


def test_only_a_session_that_asks_prepares_its_statements_on_the_server(settings: Settings) -> None:
    db = Database(settings.database_url, pool_size=1)  # one connection: the sessions below share it
    prepared = text("SELECT statement FROM pg_prepared_statements")
    try:
        with db.session(prepared=True) as session:
            for x in range(3):
                session.execute(text("SELECT 1 + :x"), {"x": x})
        with db.session() as session:
            for x in range(10):  # psycopg's own default would prepare it after 5
                session.execute(text("SELECT 2 + :x"), {"x": x})
            statements = set(session.scalars(prepared))
    finally:
        db.dispose()
    assert any("SELECT 1 + $1" in s for s in statements)
    assert not any("SELECT 2 +" in s or "pg_prepared_statements" in s for s in statements)


def test_a_pooled_connection_the_server_closed_is_replaced_before_a_session_meets_it(
    settings: Settings,
) -> None:
    """The API's pools skip pre-ping (a round trip a checkout): a connection PostgreSQL ended while it sat
    in the pool (a restart, here pg_terminate_backend) must still never fail the next request."""
    db, admin = Database(settings.database_url, pool_size=1, pre_ping=False), Database(settings.database_url)
    try:
        with db.session() as session:
            first = session.scalar(text("SELECT pg_backend_pid()"))
        with admin.session() as session:
            assert session.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": first})
        deadline = time.monotonic() + 5
        while _backend_alive(admin, first):
            assert time.monotonic() < deadline, "the backend ends"
            time.sleep(0.01)
        with db.session() as session:
            second = session.scalar(text("SELECT pg_backend_pid()"))
        assert second != first
    finally:
        db.dispose()
        admin.dispose()


def _backend_alive(db: Database, pid: int) -> bool:
    with db.session() as session:
        return bool(
            session.scalar(text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid})
        )


def _backend_pid(db: Database, result) -> None:
    with db.engine.connect() as connection:
        result.put(connection.execute(text("SELECT pg_backend_pid()")).scalar())
    db.dispose()


def test_a_forked_child_opens_connections_of_its_own_and_leaves_the_parents_open(settings: Settings) -> None:
    """Celery's prefork pool and granian fork processes that already used the database: the child must not
    talk on the parent's pooled connection (two processes on one socket), nor close it under the parent."""
    import multiprocessing

    db = Database(settings.database_url, pool_size=1)
    try:
        with db.engine.connect() as connection:
            parents = connection.execute(text("SELECT pg_backend_pid()")).scalar()
        context = multiprocessing.get_context("fork")
        result = context.SimpleQueue()
        child = context.Process(target=_backend_pid, args=(db, result))
        child.start()
        child.join(30)
        assert child.exitcode == 0 and result.get() != parents
        with db.engine.connect() as connection:  # the parent's pooled connection, still open
            assert connection.execute(text("SELECT pg_backend_pid()")).scalar() == parents
    finally:
        db.dispose()


def test_threads_that_meet_a_new_database_at_once_share_one_engine(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An API process's first requests arrive together: a thread used to find the engine another had just
    made but not yet its session factory, and failed (a 500 for most of 30 concurrent submits). The
    engine's set-up is slowed here so that every thread arrives while it is under way."""
    instrument = store.db.tracing.instrument_engine
    made: list[object] = []

    def slow_instrument(engine: object) -> None:
        made.append(engine)
        time.sleep(0.3)
        instrument(engine)

    monkeypatch.setattr(store.db.tracing, "instrument_engine", slow_instrument)
    db = Database(settings.database_url, pool_size=4)
    start = threading.Barrier(12)

    def first_query() -> int:
        start.wait()
        with db.session() as session:
            return int(session.execute(text("SELECT 1")).scalar_one())

    try:
        with ThreadPoolExecutor(12) as pool:
            answers = [future.result(timeout=60) for future in [pool.submit(first_query) for _ in range(12)]]
    finally:
        db.dispose()
    assert answers == [1] * 12 and len(made) == 1
