"""The event feed's listener (store.listen): closing it ends its thread without a word, even when the
database then goes away, and no stream starts on a closed feed."""

from __future__ import annotations

import logging
import uuid

import psycopg
import pytest

from store.db import Database
from store.listen import CHANNEL, EventFeed, Subscription
from tests.support import wait_until


def listener_threads(feed: EventFeed) -> list:
    return [feed._thread] if feed._thread is not None and feed._thread.is_alive() else []


def test_a_wait_on_one_job_is_woken_by_that_jobs_events_alone() -> None:
    """A long-poll subscribes to its job: the other jobs of its client, busy or not, leave it asleep."""
    mine, other = uuid.uuid4(), uuid.uuid4()
    on_job, on_owner, on_everyone = Subscription(7, mine), Subscription(7), Subscription(None)
    assert on_job.wanted({7}, {mine}) and not on_job.wanted({7}, {other})
    assert on_owner.wanted({7}, {other}) and not on_owner.wanted({8}, {other})
    assert on_everyone.wanted({8}, {other})


def test_a_closed_feed_stops_listening_quietly(db: Database, caplog: pytest.LogCaptureFixture) -> None:
    feed = EventFeed(db)
    feed.unsubscribe(feed.subscribe(owner_id=None))  # starts the listener
    assert listener_threads(feed)

    feed.close()
    with psycopg.connect(feed._conninfo(), autocommit=True) as connection:
        connection.execute(f"NOTIFY {CHANNEL}")  # wakes it: it sees it is closed and ends
    wait_until(lambda: not listener_threads(feed), 10, 0.05, "the listener thread to end")
    assert not [r for r in caplog.records if r.name == "zolve.events" and r.levelno >= logging.WARNING]
    with pytest.raises(RuntimeError, match="closed"):
        feed.subscribe(owner_id=None)


def test_an_event_committed_late_is_streamed_before_the_ones_after_it(isolated_db: Database) -> None:
    """Event ids are handed out in insert order but become visible at commit: a transaction that holds
    its event for 3 s (longer than any fixed guess) must not lose it to a stream that reads on."""
    import threading
    import time

    from store import events, keys
    from store.events import StreamFilter
    from tests.support import new_job

    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job = new_job(isolated_db, owner)
    feed = EventFeed(isolated_db)
    subscription = feed.subscribe(owner_id=None)
    held_open, later_committed = threading.Event(), threading.Event()

    def slow_writer() -> None:
        with isolated_db.session() as session:
            events.record(session, job.id, "progress", detail={"n": 1})
            session.flush()
            held_open.set()
            later_committed.wait(10)
            time.sleep(3)  # the slow transaction: commits 3 s after a later event did

    writer = threading.Thread(target=slow_writer)
    writer.start()
    held_open.wait(10)
    with isolated_db.session() as session:
        events.record(session, job.id, "progress", detail={"n": 2})
    later_committed.set()

    seen: list[int] = []
    last = [0]

    def read_on() -> bool:  # what a stream does: read after the last id, up to the feed's safe id
        with isolated_db.session() as session:
            page = events.stream_page(session, StreamFilter(job_id=job.id), after=last[0], upto=feed.safe_id)
        for event, _ in page:
            last[0] = event.id
            if event.event == "progress":
                seen.append(event.detail["n"])
        return 2 in seen

    try:
        wait_until(read_on, 15, 0.05, "the later event to be streamed")
    finally:
        writer.join()
        feed.unsubscribe(subscription)
        feed.close()
    assert seen == [1, 2], "the event that committed late came first, and was not skipped"


def test_a_wait_on_one_job_is_woken_past_an_id_still_missing(isolated_db: Database) -> None:
    """A long-poll needs its job's news, not the stream's order: another job's transaction holding an
    earlier id open does not hold back the wake-up of an event committed after it."""
    import threading

    from store import events, keys
    from tests.support import new_job

    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    slow, mine = new_job(isolated_db, owner), new_job(isolated_db, owner)
    feed = EventFeed(isolated_db)
    waiting = feed.subscribe(owner, mine.id)
    held_open, release = threading.Event(), threading.Event()

    def slow_writer() -> None:
        with isolated_db.session() as session:
            events.record(session, slow.id, "progress", detail={"n": 1})
            session.flush()
            held_open.set()
            release.wait(20)

    writer = threading.Thread(target=slow_writer)
    writer.start()
    try:
        assert held_open.wait(10)
        waiting.woken.take()  # whatever woke it before
        with isolated_db.session() as session:
            events.record(session, mine.id, "progress", detail={"n": 2})
            last = events.last_id(session)
        assert waiting.wait(10), "woken while the earlier id is still missing"
        assert feed.safe_id < last, "the stream's safe id waits for the open transaction"
    finally:
        release.set()
        writer.join()
        feed.unsubscribe(waiting)
        feed.close()
        with psycopg.connect(feed._conninfo(), autocommit=True) as connection:
            connection.execute(f"NOTIFY {CHANNEL}")  # its listener ends now, before the database goes
        wait_until(lambda: not listener_threads(feed), 10, 0.05, "the listener thread to end")


def test_an_id_whose_transaction_rolled_back_holds_nothing_back(isolated_db: Database) -> None:
    from store import events, keys
    from tests.support import new_job

    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job = new_job(isolated_db, owner)
    feed = EventFeed(isolated_db)
    subscription = feed.subscribe(owner_id=None)
    try:
        with pytest.raises(RuntimeError), isolated_db.session() as session:
            events.record(session, job.id, "progress", detail={"n": 1})
            session.flush()
            with isolated_db.session() as other:
                events.record(other, job.id, "progress", detail={"n": 2})
            raise RuntimeError("rolled back")
        with isolated_db.session() as session:
            later = events.last_id(session)
        wait_until(lambda: feed.safe_id >= later, 10, 0.05, "the safe id to pass the rolled-back id")
    finally:
        feed.unsubscribe(subscription)
        feed.close()
