"""api.errors: what the log says of a database outage: a line when it starts and one when it ends
(core.outages), not one a request."""

from __future__ import annotations

import logging

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from api.errors import DATABASE_OUTAGE, handle_database_error


@pytest.fixture(autouse=True)
def no_outage_before() -> None:
    """The process's outage is module state: another test may have left one open."""
    DATABASE_OUTAGE.succeeded()


def test_an_outage_is_two_lines_not_a_line_a_request(caplog: pytest.LogCaptureFixture, app) -> None:
    away = OperationalError("SELECT 1", {}, Exception("connection failed: connection refused"))  # no SQLSTATE
    with app.app_context(), caplog.at_level(logging.WARNING, logger="zolve.api"):
        answers = [handle_database_error(away).status_code for _ in range(50)]
        DATABASE_OUTAGE.succeeded()  # api.app: a new connection was made
        DATABASE_OUTAGE.succeeded()
    assert answers == [503] * 50
    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 2, said
    assert said[0].startswith("reaching the database failed (OperationalError: ") and said[0].endswith(
        "answering 503 until it works"
    )
    assert said[1].startswith("reaching the database works again, after ") and said[1].endswith(
        " and 50 failed tries"
    )


def test_a_new_connection_says_the_outage_ended(caplog: pytest.LogCaptureFixture, make_app, make_key) -> None:
    away = OperationalError("SELECT 1", {}, Exception("connection failed"))
    fresh = make_app()  # a pool of its own: its first request connects anew
    with caplog.at_level(logging.WARNING, logger="zolve.api"):
        DATABASE_OUTAGE.failed(away)
        assert fresh.test_client().get("/jobs", headers=make_key()).status_code == 200
    said = [record.getMessage() for record in caplog.records]
    assert said[-1].startswith("reaching the database works again"), said


def test_a_statement_timeout_opens_no_outage(caplog: pytest.LogCaptureFixture, app) -> None:
    """The server answered (a statement timeout, a deadlock): a line of its own, and no outage that only a
    new connection would end."""
    timeout = OperationalError(
        "SELECT 1", {}, psycopg.errors.QueryCanceled("canceling statement due to timeout")
    )
    with app.app_context(), caplog.at_level(logging.WARNING, logger="zolve.api"):
        assert handle_database_error(timeout).status_code == 503
        DATABASE_OUTAGE.succeeded()
    said = [record.getMessage() for record in caplog.records]
    assert len(said) == 1 and said[0].startswith("database error, answered 503: OperationalError"), said
