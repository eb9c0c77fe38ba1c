"""services.running.retry_on_db_error: a step that must land (a plan, a shard's outcome) is tried again
while the database is away, within the lease that keeps the work ours, and no longer."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy.exc import IntegrityError, OperationalError

from services.running import retry_on_db_error

AWAY = OperationalError("SELECT 1", {}, Exception("server closed the connection unexpectedly"))


class Flaky:
    """Fails with `error` `failures` times, then answers 42."""

    def __init__(self, failures: int, error: Exception = AWAY) -> None:
        self.failures, self.error, self.calls = failures, error, 0

    def __call__(self) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return 42


def test_an_outage_shorter_than_the_lease_is_waited_out_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    action = Flaky(failures=2)
    with caplog.at_level(logging.WARNING, logger="zolve.worker"):
        assert retry_on_db_error(action, within=10) == 42
    assert action.calls == 3
    assert [record.getMessage() for record in caplog.records] == [
        "database unavailable, retrying in 0.2 s",
        "database unavailable, retrying in 0.4 s",
    ]


def test_an_outage_longer_than_the_lease_raises_its_last_error() -> None:
    action = Flaky(failures=100)
    with pytest.raises(OperationalError):
        retry_on_db_error(action, within=0.5)
    assert action.calls == 2, "0.2 s, then a 0.4 s pause would end past the 0.5 s: no third try"


def test_an_error_that_is_no_outage_is_raised_at_once() -> None:
    action = Flaky(failures=1, error=IntegrityError("INSERT", {}, Exception("duplicate key")))
    with pytest.raises(IntegrityError):
        retry_on_db_error(action, within=10)
    assert action.calls == 1
