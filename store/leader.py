"""One sweeper at a time: the worker process that holds a session-level advisory lock, on a connection of
its own, leads; the others only try to take the lock at each sweep. The lock ends with its session, so a
leader that dies, hangs or is cut off hands over by itself: PostgreSQL ends the session when its process
is gone (TCP keepalives) or has said nothing for `idle_session_timeout` (the leader speaks at every sweep).
Two leaders for a moment (an old one that has not yet noticed) are harmless: a sweep is safe to run from
many processes at once; one at a time only saves the work."""

from __future__ import annotations

import contextlib
import logging

import psycopg
from sqlalchemy import make_url

from core import forks
from store.db import TCP_LIVENESS, Database

log = logging.getLogger("zolve.leader")

#: pg_try_advisory_lock key: "zolvsw"
SWEEP_LEADER_LOCK = 0x7A6F_6C76_7377


class Leadership:
    def __init__(self, db: Database, silent_after: float, key: int = SWEEP_LEADER_LOCK):
        self.db, self.key = db, key
        #: the leader's session ends after this long without a word (at least 2 s)
        self.silent_after_ms = int(max(2.0, silent_after) * 1000)
        self._connection: psycopg.Connection | None = None
        self._leading = False
        forks.reset_in_child(self, Leadership._forget_parent)
        #: whether the last check reached the database (a follower's view of it, too)
        self.reached = False

    def _forget_parent(self) -> None:
        """In a forked child: the parent's session (and its lock, if it led) stays the parent's."""
        self._connection, self._leading = None, False

    def held(self) -> bool:
        """Whether this process leads now: it keeps the lock while its session lives, and otherwise tries
        to take it. False when the database cannot be reached."""
        self.reached = False
        try:
            if self._connection is None or self._connection.closed:
                self._connection, self._leading = self._connect(), False
            if self._leading:
                self._connection.execute("SELECT 1")
                self.reached = True
                return True
            row = self._connection.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
            self.reached, self._leading = True, bool(row and row[0])
            if self._leading:
                log.info("this process now leads the sweeps")
            return self._leading
        except psycopg.Error:
            self.close()
            return False

    def close(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(psycopg.Error):
                self._connection.close()
        self._connection, self._leading = None, False

    def _connect(self) -> psycopg.Connection:
        conninfo = make_url(self.db.url).set(drivername="postgresql").render_as_string(hide_password=False)
        silence = f"-c idle_session_timeout={self.silent_after_ms}"
        try:
            return psycopg.connect(
                conninfo, autocommit=True, connect_timeout=5, options=silence, **TCP_LIVENESS
            )
        except psycopg.OperationalError as exc:
            if "idle_session_timeout" not in str(exc):
                raise
            # PostgreSQL before 14: a silent leader is then found out by TCP keepalives alone
            return psycopg.connect(conninfo, autocommit=True, connect_timeout=5, **TCP_LIVENESS)
