"""The database handle: one engine per process (re-created after a fork), sessions, URL normalisation."""

from __future__ import annotations

import select
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypedDict, cast

import psycopg
from sqlalchemy import CursorResult, Engine, Result, create_engine, event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, sessionmaker

from core import forks, tracing


def normalize_url(url: str) -> str:
    """Use psycopg 3 for plain `postgres://` / `postgresql://` URLs."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class TcpLiveness(TypedDict):
    keepalives: int
    keepalives_idle: int
    keepalives_interval: int
    keepalives_count: int
    tcp_user_timeout: int


#: a connection to a server that a network partition cut off fails within about 20 s, instead of hanging
#: until the kernel gives up (15 minutes and more), which would freeze a worker's sweeper and heartbeat
#: (libpq's TCP settings; ignored on unix sockets)
TCP_LIVENESS: TcpLiveness = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 2,
    "tcp_user_timeout": 20_000,  # ms: unacknowledged data (a query sent into the partition)
}


#: the same on the server's side: the backend of a client whose host vanished (powered off mid-transaction)
#: is ended within about 20 s, and the row locks it held with it
SERVER_TCP_LIVENESS = (
    "-c tcp_keepalives_idle=10",
    "-c tcp_keepalives_interval=5",
    "-c tcp_keepalives_count=2",
    "-c tcp_user_timeout=20000",
)


def rowcount(result: Result[Any]) -> int:
    """The rows an UPDATE or DELETE matched: Session.execute returns a CursorResult for it, typed as a plain
    Result."""
    return cast(CursorResult[Any], result).rowcount


def driver_connection(session: Session) -> psycopg.Connection:
    """The session's own psycopg connection (the engine's driver is always psycopg 3)."""
    connection = session.connection().connection.driver_connection
    assert isinstance(connection, psycopg.Connection)
    return connection


def closed_by_server(connection: psycopg.Connection) -> bool:
    """Whether an idle connection has something to read: PostgreSQL says nothing to an idle client but its
    goodbye (a restart, pg_terminate_backend), then closes. A look at the socket, no round trip."""
    if connection.closed:
        return True
    watch = select.poll()
    watch.register(connection.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(watch.poll(0))


def _refuse_closed(dbapi_connection: psycopg.Connection, record: object, proxy: object) -> None:
    """On checkout from a pool without pre-ping: a connection the server closed while it sat in the pool
    (PostgreSQL restarted) is replaced before any request meets it, so that the first requests after a
    restart are served like every other (SQLAlchemy retries the checkout with a new connection)."""
    if closed_by_server(dbapi_connection):
        raise DisconnectionError("the server closed this pooled connection")


class Database:
    def __init__(
        self,
        url: str,
        pool_size: int = 5,
        pre_ping: bool = True,
        statement_timeout: float | None = None,
        on_connect: Callable[[], None] | None = None,
    ):
        """`on_connect`: called each time a new connection to the server is made (the server answers)."""
        self.url = normalize_url(url)
        self.on_connect = on_connect
        self.pool_size = pool_size
        #: seconds PostgreSQL lets one statement run on these connections before cancelling it
        self.statement_timeout = statement_timeout
        #: test each pooled connection before use (one round trip); without it, the first use of a
        #: connection the server dropped fails, and SQLAlchemy then invalidates the whole pool
        self.pre_ping = pre_ping
        self._engine: Engine | None = None
        self._sessions: sessionmaker[Session] | None = None
        #: the engine is made on first use, by whichever thread comes first: once, and whole
        self._making = threading.Lock()
        forks.reset_in_child(self, Database._forget_parent)

    def _forget_parent(self) -> None:
        """In a forked child: the parent's pooled connections stay the parent's (left open for it)."""
        if self._engine is not None:
            self._engine.dispose(close=False)
        self._engine, self._sessions = None, None
        self._making = threading.Lock()  # a thread of the parent's may have held it at the fork

    @property
    def engine(self) -> Engine:
        engine = self._engine
        if engine is not None:
            return engine
        with self._making:
            if self._engine is None:
                self._make_engine()
        assert self._engine is not None
        return self._engine

    def _make_engine(self) -> None:
        """The engine and its session factory, the engine published last: a thread that sees it sees both."""
        engine = create_engine(
            self.url,
            pool_size=self.pool_size,
            max_overflow=self.pool_size,
            pool_pre_ping=self.pre_ping,
            pool_recycle=1800,
            connect_args=self._connect_args(),
            # a statement's parameters may be secrets (a webhook secret being rotated): an error's
            # message, which a log may print, names the statement but never its values
            hide_parameters=True,
        )
        if not self.pre_ping:
            event.listen(engine, "checkout", _refuse_closed)
        if self.on_connect is not None:
            on_connect = self.on_connect
            event.listen(engine, "connect", lambda *_: on_connect())
        tracing.instrument_engine(engine)  # this process traces: its SQL joins the spans
        self._sessions = sessionmaker(engine, expire_on_commit=False)
        self._engine = engine

    def _connect_args(self) -> dict[str, object]:
        # never prepare statements on the server unless a session asks to: psycopg would after 5 executions,
        # and PostgreSQL may then reuse one generic plan for every filter value (an id range of 1 or of 16^8
        # ids, a kind with ten jobs or a million); unprepared, each execution is planned for its own values
        args: dict[str, object] = {"connect_timeout": 5, "prepare_threshold": None, **TCP_LIVENESS}
        options = list(SERVER_TCP_LIVENESS)
        if self.statement_timeout:
            options.append(f"-c statement_timeout={int(self.statement_timeout * 1000)}")
        args["options"] = " ".join(options)
        return args

    @contextmanager
    def session(self, prepared: bool = False) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on error.

        `prepared`: its statements are prepared on the server and the connection keeps them, for
        statements run many times a second with values alike (a shard's claim and store, each planned
        again otherwise: docs/benchmarks.md, "The plan in one walk, the long-poll woken, the store
        prepared")."""
        _ = self.engine
        assert self._sessions is not None
        with self._sessions() as session, session.begin():
            if not prepared:
                yield session
                return
            connection = driver_connection(session)
            connection.prepare_threshold = 0
            try:
                yield session
            finally:
                connection.prepare_threshold = None  # this connection's other users plan each statement

    def dispose(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
