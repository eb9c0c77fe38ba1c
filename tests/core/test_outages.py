"""Work that keeps failing while a server is away: one line when it starts, one when it works again."""

import logging

import pytest

from core.outages import Outage, one_line


class Away(Exception):
    pass


def away(error: BaseException) -> bool:
    return isinstance(error, Away)


def test_an_outage_is_one_line_when_it_starts_and_one_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(logging.getLogger("test.outages"), "heartbeat", away)
    with caplog.at_level(logging.WARNING, "test.outages"):
        outage.succeeded()
        for _ in range(5):
            outage.failed(Away("connection refused\nIs the server running on that host?"))
        outage.succeeded()
        outage.succeeded()
    lines = [record.getMessage() for record in caplog.records]
    assert lines[0] == "heartbeat failed (Away: connection refused); retrying until it works"
    assert lines[1].startswith("heartbeat works again, after ") and lines[1].endswith(" and 5 failed tries")
    assert len(lines) == 2 and all(record.exc_info is None for record in caplog.records)


def test_a_second_outage_is_told_again(caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(logging.getLogger("test.outages"), "sweep", away)
    with caplog.at_level(logging.WARNING, "test.outages"):
        for _ in range(2):
            outage.failed(Away("gone"))
            outage.succeeded()
    assert [record.getMessage().split(" (")[0].split(",")[0] for record in caplog.records] == [
        "sweep failed",
        "sweep works again",
        "sweep failed",
        "sweep works again",
    ]


def test_any_other_failure_keeps_its_traceback_every_time(caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(logging.getLogger("test.outages"), "sweep", away)
    with caplog.at_level(logging.WARNING, "test.outages"):
        for _ in range(2):
            outage.failed(KeyError("a bug"))
    assert len(caplog.records) == 2 and all(record.exc_info for record in caplog.records)


def test_one_line_names_the_type_and_the_first_line() -> None:
    assert one_line(Away("first\nsecond")) == "Away: first" and one_line(Away()) == "Away"
