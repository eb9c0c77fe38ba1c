"""api.errors: what the log says of a database outage, once and then in a count, not once a request."""

from __future__ import annotations

import logging
import time

import pytest

from api.errors import OutageLines


def test_an_outage_is_a_line_and_then_a_count_not_a_line_a_request(caplog: pytest.LogCaptureFixture) -> None:
    lines = OutageLines(every=0.3)
    with caplog.at_level(logging.WARNING, logger="zolve.api"):
        for _ in range(50):
            lines.say("OperationalError")
        time.sleep(0.35)
        lines.say("OperationalError")
    said = [record.getMessage() for record in caplog.records]
    assert said == [
        "database unavailable (OperationalError): answering 503",
        "database unavailable (OperationalError): answering 503 (49 more 503s since the last line)",
    ]
