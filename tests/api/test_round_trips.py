"""What a submit and a poll cost the database, in statements (issue 32, the API's performance): each one
is a round trip from a request thread, so the count is the behaviour kept here; bench/api_load.py says
what it buys."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import event

from api.extension import zolve

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


@contextmanager
def statements(app) -> Iterator[list[str]]:
    """The statements the app sends to PostgreSQL meanwhile from this thread, which runs the test client's
    requests (BEGIN and COMMIT are not statements here; the event feed's thread reads on its own)."""
    sent: list[str] = []
    engine = zolve(app).db.engine
    requests_thread = threading.get_ident()

    def record(_conn, _cursor, statement, *_args) -> None:
        if threading.get_ident() == requests_thread:
            sent.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


def test_a_submit_is_five_statements_in_one_transaction(app, client, auth) -> None:
    """The owner's lock (its release takes no other), its unfinished count, the job's INSERT … RETURNING
    (no read after it), its event and the release (whose window of live workers is read in the same
    statement)."""
    assert client.post("/jobs", json=DICE, headers=auth).status_code == 202  # warm: the key is cached
    with statements(app) as sent:
        response = client.post("/jobs", json=DICE, headers=auth)
    assert response.status_code == 202
    assert response.get_json()["created_at"]  # what the read after the INSERT was for
    assert len(sent) == 5, sent
    locks = [statement for statement in sent if "pg_advisory_xact_lock" in statement]
    assert locks == sent[:1], sent


def test_a_poll_of_a_finished_job_reads_nothing(app, client, auth, wait_job, worker) -> None:
    job = client.post("/jobs", json=DICE, headers=auth).get_json()
    assert wait_job(auth, job["id"])["state"] == "succeeded"
    assert client.get(f"/jobs/{job['id']}", headers=auth).status_code == 200
    with statements(app) as sent:
        assert client.get(f"/jobs/{job['id']}", headers=auth).get_json()["state"] == "succeeded"
    assert sent == []
