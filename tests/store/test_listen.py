"""The event feed's listener (store.listen): closing it ends its thread without a word, even when the
database then goes away, and no stream starts on a closed feed."""

from __future__ import annotations

import logging

import psycopg
import pytest

from store.db import Database
from store.listen import CHANNEL, EventFeed
from tests.support import wait_until


def listener_threads(feed: EventFeed) -> list:
    return [feed._thread] if feed._thread is not None and feed._thread.is_alive() else []


def test_a_closed_feed_stops_listening_quietly(db: Database, caplog: pytest.LogCaptureFixture) -> None:
    feed = EventFeed(db, gap_seconds=1.0)
    feed.unsubscribe(feed.subscribe(owner_id=None))  # starts the listener
    assert listener_threads(feed)

    feed.close()
    with psycopg.connect(feed._conninfo(), autocommit=True) as connection:
        connection.execute(f"NOTIFY {CHANNEL}")  # wakes it: it sees it is closed and ends
    wait_until(lambda: not listener_threads(feed), 10, 0.05, "the listener thread to end")
    assert not [r for r in caplog.records if r.name == "zolve.events" and r.levelno >= logging.WARNING]
    with pytest.raises(RuntimeError, match="closed"):
        feed.subscribe(owner_id=None)
