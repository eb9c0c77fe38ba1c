"""A job's stored rows, for any kind that stores them: written with COPY, read in keyset pages and streamed
exports, deleted in chunks.

A row is (job, key, payload) (store.models.Row): `key` orders the job's rows, `payload` is whatever else
the kind keeps, in its own format. The kind supplies its filters (conditions on key and payload, e.g. a
bit field of the key: KeyBits) and the statistics PostgreSQL needs to plan them (ensure_statistics): this
module knows no kind."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import psycopg
from sqlalchemy import BigInteger, ColumnElement, func, literal_column, null, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from core.states import JobState
from store.db import Database, rowcount
from store.models import Job, Row

log = logging.getLogger(__name__)

#: a row as a puzzle hands it over: its key alone, or its key and payload
RowData = int | tuple[int, bytes | None]


class RowFilter(Protocol):
    """A condition every returned row must meet, on the columns of store.models.Row."""

    def condition(self) -> ColumnElement[bool]: ...


@dataclass(frozen=True)
class KeyBits:
    """A row matches when `(key >> shift) & mask == value`: a field of a key that packs several."""

    shift: int
    mask: int
    value: int

    def condition(self) -> ColumnElement[bool]:
        # integer literals, not parameters: PostgreSQL has no `bigint >> smallint` for a guessed type
        shift, mask, value = (
            literal_column(str(int(n)), BigInteger) for n in (self.shift, self.mask, self.value)
        )
        return Row.key.op(">>")(shift).op("&")(mask) == value


def key_bits_statistic(shift: int, mask: int) -> str:
    """The expression a KeyBits filter tests, for `ensure_statistics` (without statistics on it
    PostgreSQL guesses that a field matches one row in 200, and sorts a whole job instead of reading its
    key in order)."""
    return f"(key >> {int(shift)}) & {int(mask)}"


def copy_rows(session: Session, job_id: uuid.UUID, rows: Sequence[RowData]) -> None:
    """Bulk-write rows with PostgreSQL COPY, inside the session's transaction. Keys alone (a batch of
    ints: a Planet X shard's boards) go as one block of COPY's binary format, the fast path; (key,
    payload) pairs row by row, adapted by the driver."""
    if not rows:
        return
    cursor = _psycopg(session).cursor()
    if isinstance(rows[0], int):
        with cursor.copy("COPY rows (job_id, key) FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(_binary_keys(job_id, rows))
        return
    with cursor.copy("COPY rows (job_id, key, payload) FROM STDIN") as copy:
        for row in rows:
            key, payload = row if isinstance(row, tuple) else (row, None)
            copy.write_row((job_id, key, payload))


#: a row of COPY's binary format with the columns (job_id uuid, key bigint), big-endian
_KEY_ROW = np.dtype(
    [("fields", ">i2"), ("id_size", ">i4"), ("job_id", "V16"), ("key_size", ">i4"), ("key", ">i8")]
)
_BINARY_HEADER = b"PGCOPY\n\xff\r\n\0" + bytes(8)  # signature, no flags, no header extension
_BINARY_TRAILER = b"\xff\xff"


def _binary_keys(job_id: uuid.UUID, keys: Sequence[RowData]) -> bytes:
    """Keys as COPY's binary format, composed at once with numpy: PostgreSQL parses no text and Python
    formats no row (a shard stores about 3,000 boards)."""
    table = np.zeros(len(keys), dtype=_KEY_ROW)
    table["fields"], table["id_size"], table["key_size"] = 2, 16, 8
    table["job_id"] = np.void(job_id.bytes)
    table["key"] = np.asarray(keys, dtype=np.int64)
    return _BINARY_HEADER + table.tobytes() + _BINARY_TRAILER


def _psycopg(session: Session) -> psycopg.Connection:
    """The session's own psycopg connection (the engine's driver is always psycopg 3)."""
    connection = session.connection().connection.driver_connection
    assert isinstance(connection, psycopg.Connection)
    return connection


def page(
    db: Database,
    job_id: uuid.UUID,
    filters: Sequence[RowFilter],
    limit: int,
    after: int | None,
    payloads: bool = True,
) -> tuple[list[tuple[int, bytes | None]], int | None]:
    """Up to `limit` rows (key, payload) after the key `after`, in key order, and the cursor of the next
    page (None: this is the last). Without `payloads` the payload is None and the key alone is read (an
    index-only scan of the primary key)."""
    conditions = [f.condition() for f in filters]
    query = (
        select(Row.key, Row.payload if payloads else null())
        .where(Row.job_id == job_id, *conditions)
        .order_by(Row.key)
        .limit(limit + 1)
    )
    if after is not None:
        query = query.where(Row.key > after)
    with db.session() as session:
        found = [(key, payload) for key, payload in session.execute(query)]
    more = len(found) > limit
    found = found[:limit]
    return found, found[-1][0] if more and found else None


def _where(filters: Sequence[RowFilter]) -> str:
    dialect = postgresql.dialect()
    return "".join(
        f" AND {f.condition().compile(dialect=dialect, compile_kwargs={'literal_binds': True})}"
        for f in filters
    )


#: only the heap (the primary key's entries are all live), no wait on another VACUUM, no lock to shorten
#: the table: nothing a writer or reader of rows waits for
_VACUUM_ROWS = text("VACUUM (INDEX_CLEANUP OFF, TRUNCATE OFF, SKIP_LOCKED) rows")


def make_visible(db: Database) -> None:
    """Mark the rows stored since the last VACUUM visible to every transaction in the table's visibility
    map, so that reading a job's keys (pages, exports) is an index-only scan. Fresh rows are read row by
    row from the heap instead, in key order, which the shards' rows are not in: an expert enumeration's
    keys took 0.43 s to read fresh, 0.17 s after this (0.04 s). Run when a job's rows are all stored (a
    sharded job's finalize); autovacuum would do the same in its own time, so a failure only logs."""
    try:
        with db.engine.connect() as connection:
            connection.execution_options(isolation_level="AUTOCOMMIT").execute(_VACUUM_ROWS)
    except DBAPIError as exc:
        log.warning("the rows' visibility map was not brought up to date: %s", exc)


def read_in_key_order(session: Session) -> None:
    """This transaction reads a job's rows in key order from the primary key, never by sorting them.
    Right after a job stores its rows PostgreSQL's statistics do not know them yet: it planned a
    1,138,272-row export as a bitmap scan and a sort of every row (an estimate of 3,519), 1.6 s against
    1.1 s in key order, and the sort holds everything before the first byte goes out."""
    session.execute(text("SET LOCAL enable_sort = off"))
    session.execute(text("SET LOCAL enable_bitmapscan = off"))


def stream(
    db: Database, job_id: uuid.UUID, filters: Sequence[RowFilter], chunk: int = 10_000, payloads: bool = False
) -> Iterator[list]:
    """Every matching row in key order, in chunks, through a server-side cursor: constant memory at any
    size. Keys alone, or (key, payload) pairs with `payloads`.

    The driver's own named cursor, binary: the ORM's result rows cost 6x more (an expert enumeration's
    1,138,272 codes: about 11 s through the ORM, under 2 s this way, the machine loaded)."""
    columns = "key, payload" if payloads else "key"
    query = f"SELECT {columns} FROM rows WHERE job_id = %s{_where(filters)} ORDER BY key"
    with db.session() as session:
        read_in_key_order(session)
        connection = _psycopg(session)
        with connection.cursor(name="zolve_rows_stream", binary=True) as cursor:
            cursor.itersize = chunk
            cursor.execute(query, (job_id,))
            while batch := cursor.fetchmany(chunk):
                if payloads:
                    yield [(key, None if payload is None else bytes(payload)) for key, payload in batch]
                else:
                    yield [key for (key,) in batch]


#: a chunk of a job's keys in key order, as one value: their big-endian 8 bytes one after the other (the
#: aggregate reads the primary key's order: PostgreSQL 16 sorts nothing), and the chunk's last key
_KEY_CHUNK = (
    "SELECT string_agg(int8send(key), ''::bytea ORDER BY key), max(key)"
    " FROM (SELECT key FROM rows WHERE job_id = %s{where} ORDER BY key LIMIT %s) AS chunk"
)


def key_chunks(
    db: Database, job_id: uuid.UUID, filters: Sequence[RowFilter], chunk: int = 50_000
) -> Iterator[np.ndarray]:
    """Every matching key in key order, `chunk` keys at a time, each chunk one array (int64) from one
    short statement: no row crosses the wire or Python alone (a COPY sends each row as a message of its
    own, which cost more than the database's reading them). The chunks are read in one snapshot, each
    after the last key of the one before."""
    where = _where(filters)
    first, after = _KEY_CHUNK.format(where=where), _KEY_CHUNK.format(where=f"{where} AND key > %s")
    with db.session() as session:
        session.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
        read_in_key_order(session)
        with _psycopg(session).cursor(binary=True) as cursor:
            found = cursor.execute(first, (job_id, chunk)).fetchone()
            while found is not None and found[0] is not None:
                data, last = found
                yield np.frombuffer(data, dtype=">i8").astype(np.int64)
                found = cursor.execute(after, (job_id, last, chunk)).fetchone()


_STATISTIC_NAME = re.compile(r"[a-z][a-z0-9_]*")


def ensure_statistics(db: Database, wanted: Mapping[str, Iterable[str]]) -> list[str]:
    """Make the extended statistics that kinds ask for on the rows' expressions (rows name -> SQL
    expressions over `key` and `payload`), named `rows_<name>_<n>`, when missing: a kind's filters then
    plan on real selectivities. Returns the names made. Run at start-up (services.schema.migrate), by
    whoever may run DDL; a name taken with another expression is left as it is."""
    made = []
    with db.session() as session:
        existing = set(
            session.scalars(text("SELECT stxname FROM pg_statistic_ext WHERE stxrelid = 'rows'::regclass"))
        )
        for name, expressions in wanted.items():
            if not _STATISTIC_NAME.fullmatch(name):
                raise ValueError(f"rows name {name!r} cannot name statistics")
            for n, expression in enumerate(expressions, start=1):
                statistic = f"rows_{name}_{n}"
                if statistic not in existing:
                    create = f"CREATE STATISTICS IF NOT EXISTS {statistic} ON (({expression})) FROM rows"
                    session.execute(text(create))
                    made.append(statistic)
    return made


def latest_rows_source(
    db: Database, kind: str, params_equal: Mapping[str, str], params_empty: Sequence[str] = ()
) -> uuid.UUID | None:
    """Whose rows a succeeded job of `kind` reads, newest first, among jobs whose params have these text
    values and leave these lists empty (e.g. a complete enumeration: a mode, no extra constraints).

    Such rows are public facts, not a client's data: any job may read them (as the cache does)."""
    conditions = [Job.params[key].astext == value for key, value in params_equal.items()]
    conditions += [func.coalesce(func.jsonb_array_length(Job.params[key]), 0) == 0 for key in params_empty]
    query = (
        select(Job.rows_job_id)
        .where(Job.kind == kind, Job.state == JobState.SUCCEEDED, Job.rows_job_id.isnot(None), *conditions)
        .order_by(Job.finished_at.desc())
        .limit(1)
    )
    with db.session() as session:
        return session.scalar(query)


def all_keys(db: Database, job_id: uuid.UUID) -> list[int]:
    """Every key a job stored (unordered), in one round trip."""
    with db.session() as session:
        return list(session.scalars(select(Row.key).where(Row.job_id == job_id)))


#: rows deleted per transaction (an expert enumeration stores about a million)
DELETE_CHUNK = 20_000

# a range of the key, bounded once by the chunk's last key (an InitPlan): an `IN (subquery)` form was
# planned on stale statistics as a nested loop that rescanned the chunk for every row of the job (a retry
# of 1M rows ran for over 8 minutes on a fresh database)
_DELETE_ROWS = text(
    """
    DELETE FROM rows WHERE job_id = :job_id AND key <= (
        SELECT max(key) FROM (
            SELECT key FROM rows WHERE job_id = :job_id ORDER BY key LIMIT :limit
        ) AS chunk
    )
    """
)


def delete_rows(
    db: Database,
    job_id: uuid.UUID,
    keep_going: Callable[[Session], bool],
    chunk: int = DELETE_CHUNK,
) -> tuple[int, bool]:
    """Delete every row a job stored, `chunk` rows per transaction, so that no statement runs long (the
    one way rows are deleted: retention's purge, and a retried job's worker before it plans again).
    `keep_going(session)` runs first in each chunk's transaction (a purge holds its lock, a job its
    lease); False stops. Returns how many rows went, and whether they all did."""
    deleted = 0
    while True:
        with db.session() as session:
            if not keep_going(session):
                return deleted, False
            done = rowcount(session.execute(_DELETE_ROWS, {"job_id": job_id, "limit": chunk}))
        deleted += done
        if done < chunk:
            return deleted, True
