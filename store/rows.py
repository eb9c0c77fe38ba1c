"""A job's stored rows, for any kind that stores them: written in bulk, read in keyset pages and streamed
exports, deleted in chunks.

Rows come in two layouts. A kind whose key says it all (a Planet X board is its code) stores keys alone,
in blocks (store.models.RowBlock): a shard's sorted keys in one value, merged into runs that do not
interleave when the job's shards are all stored (compact). A kind with payloads stores a row per key
(store.models.Row: job, key, payload), written with COPY. The kind supplies its filters (conditions on
the key, e.g. a bit field of it: KeyBits; on the payload too, for rows) and, for rows, the statistics
PostgreSQL needs to plan them (ensure_statistics): this module knows no kind."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import psycopg
from sqlalchemy import BigInteger, ColumnElement, delete, func, literal_column, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from core.states import JobState
from store.db import Database, driver_connection, rowcount
from store.models import Job, Row, RowBlock

log = logging.getLogger(__name__)

#: a row as a puzzle hands it over: its key alone, or its key and payload
RowData = int | tuple[int, bytes | None]


class RowFilter(Protocol):
    """A condition every returned row must meet: on the columns of store.models.Row (`condition`), and on
    many keys at once, for blocks (`matches`: a bool array)."""

    def condition(self) -> ColumnElement[bool]: ...

    def matches(self, keys: np.ndarray) -> np.ndarray: ...


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

    def matches(self, keys: np.ndarray) -> np.ndarray:
        matched: np.ndarray = (keys >> self.shift) & self.mask == self.value
        return matched


def copy_rows(session: Session, job_id: uuid.UUID, rows: Sequence[RowData]) -> None:
    """Bulk-write rows inside the session's transaction. Keys alone (a batch of ints: a Planet X shard's
    boards) go into blocks (store_keys); (key, payload) pairs into rows, with COPY."""
    if not rows:
        return
    if isinstance(rows[0], int):
        store_keys(session, job_id, np.asarray(rows, dtype=np.int64))
        return
    with driver_connection(session).cursor().copy("COPY rows (job_id, key, payload) FROM STDIN") as copy:
        for row in rows:
            key, payload = row if isinstance(row, tuple) else (row, None)
            copy.write_row((job_id, key, payload))


#: keys per block at most: a shard's (about 3,000 Planet X boards) is one block; a job's merged runs are
#: cut at this size, 128 KiB, so that a page reads little more than it returns
BLOCK_KEYS = 16_384

_INSERT_BLOCK = (
    "INSERT INTO row_blocks (job_id, first_key, last_key, count, keys) VALUES (%s, %s, %s, %s, %s)"
)


def store_keys(session: Session, job_id: uuid.UUID, keys: np.ndarray) -> None:
    """Store keys in blocks of at most BLOCK_KEYS, sorted: one INSERT of one value for a shard's, where
    a row per key costs PostgreSQL a heap tuple and an index entry each (docs/benchmarks.md, "A block of
    keys per shard"). A key stored twice for a job makes two blocks with the same first key fail
    (the primary key) when they begin with it, and is left out when the job's blocks merge (compact)."""
    ordered = np.sort(np.asarray(keys, dtype=np.int64))
    blocks = [ordered[start : start + BLOCK_KEYS] for start in range(0, len(ordered), BLOCK_KEYS)]
    with driver_connection(session).cursor() as cursor:
        cursor.executemany(
            _INSERT_BLOCK,
            [
                (job_id, int(block[0]), int(block[-1]), len(block), block.astype(">i8").tobytes())
                for block in blocks
            ],
        )


def page(
    db: Database,
    job_id: uuid.UUID,
    filters: Sequence[RowFilter],
    limit: int,
    after: int | None,
    payloads: bool = True,
) -> tuple[list[tuple[int, bytes | None]], int | None]:
    """Up to `limit` rows (key, payload) after the key `after`, in key order, and the cursor of the next
    page (None: this is the last). With `payloads` the kind's rows are read (store.models.Row); without,
    its blocks of keys, and the payload is None."""
    if not payloads:
        return _key_page(db, job_id, filters, limit, after)
    conditions = [f.condition() for f in filters]
    query = (
        select(Row.key, Row.payload)
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


def _key_page(
    db: Database, job_id: uuid.UUID, filters: Sequence[RowFilter], limit: int, after: int | None
) -> tuple[list[tuple[int, bytes | None]], int | None]:
    taken, count = [], 0
    with _snapshot(db) as cursor:
        for keys in _keys_in_order(cursor, job_id, filters, after):
            taken.append(keys[: limit + 1 - count])
            count += len(taken[-1])
            if count > limit:
                break
    found = np.concatenate(taken).tolist() if taken else []
    more = len(found) > limit
    found = found[:limit]
    return [(key, None) for key in found], found[-1] if more and found else None


def _where(filters: Sequence[RowFilter]) -> str:
    # SQLAlchemy leaves the psycopg dialect's __init__ unannotated
    dialect = postgresql.dialect()  # type: ignore[no-untyped-call]
    return "".join(
        f" AND {f.condition().compile(dialect=dialect, compile_kwargs={'literal_binds': True})}"
        for f in filters
    )


def read_in_key_order(session: Session) -> None:
    """This transaction reads a job's rows in key order from the primary key, never by sorting them.
    Right after a job stores its rows PostgreSQL's statistics do not know them yet: it planned a
    1,138,272-row export as a bitmap scan and a sort of every row (an estimate of 3,519), 1.6 s against
    1.1 s in key order, and the sort holds everything before the first byte goes out."""
    session.execute(text("SET LOCAL enable_sort = off"))
    session.execute(text("SET LOCAL enable_bitmapscan = off"))


def stream(
    db: Database, job_id: uuid.UUID, filters: Sequence[RowFilter], chunk: int = 10_000, payloads: bool = False
) -> Iterator[list[Any]]:
    """Every matching row in key order, in chunks: constant memory at any size. Keys alone (read from
    the blocks: key_chunks), or (key, payload) pairs with `payloads`, through a server-side cursor.

    The driver's own named cursor, binary: the ORM's result rows cost several times more (see
    docs/benchmarks.md)."""
    if not payloads:
        for keys in key_chunks(db, job_id, filters, chunk):
            yield keys.tolist()
        return
    query = f"SELECT key, payload FROM rows WHERE job_id = %s{_where(filters)} ORDER BY key"
    with db.session() as session:
        read_in_key_order(session)
        connection = driver_connection(session)
        with connection.cursor(name="zolve_rows_stream", binary=True) as cursor:
            cursor.itersize = chunk
            cursor.execute(query, (job_id,))
            while batch := cursor.fetchmany(chunk):
                yield [(key, None if payload is None else bytes(payload)) for key, payload in batch]


def key_chunks(
    db: Database, job_id: uuid.UUID, filters: Sequence[RowFilter], chunk: int = 50_000
) -> Iterator[np.ndarray]:
    """Every matching key of a job's blocks in key order, at most `chunk` at a time, each chunk one array
    (int64), all read in one snapshot: no key crosses the wire or Python alone."""
    with _snapshot(db) as cursor:
        for keys in _keys_in_order(cursor, job_id, filters):
            for start in range(0, len(keys), chunk):
                yield keys[start : start + chunk]


@contextmanager
def _snapshot(db: Database) -> Iterator[psycopg.Cursor]:
    """A cursor whose statements all read one snapshot: a job's spans and the blocks they name agree,
    whatever a merge (compact) commits meanwhile."""
    with db.session() as session:
        session.execute(text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"))
        with driver_connection(session).cursor(binary=True) as cursor:
            yield cursor


_SPANS = "SELECT first_key, last_key FROM row_blocks WHERE job_id = %s{after} ORDER BY first_key"
_BLOCKS_BETWEEN = "SELECT keys FROM row_blocks WHERE job_id = %s AND first_key BETWEEN %s AND %s"


def _keys_in_order(
    cursor: psycopg.Cursor, job_id: uuid.UUID, filters: Sequence[RowFilter], after: int | None = None
) -> Iterator[np.ndarray]:
    """The job's matching keys after `after`, in key order, as sorted arrays: the blocks whose spans
    overlap are read and sorted together (a running job's shards each span nearly the whole key), a
    block that overlaps none alone (a finished job's runs, merged by compact)."""
    spans = cursor.execute(
        _SPANS.format(after="" if after is None else " AND last_key > %s"),
        (job_id,) if after is None else (job_id, after),
    ).fetchall()
    for first, last in _overlapping(spans):
        blocks = [data for (data,) in cursor.execute(_BLOCKS_BETWEEN, (job_id, first, last))]
        keys = _unpacked(blocks)
        if len(blocks) > 1:
            keys.sort()
        wanted = np.ones(len(keys), dtype=bool) if after is None else keys > after
        for row_filter in filters:
            wanted &= row_filter.matches(keys)
        if wanted.any():
            yield keys[wanted]


def _overlapping(spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans (first key, last key) in order of first key, grouped where they overlap: each group as the
    first keys of its first and last block."""
    groups: list[tuple[int, int]] = []
    reach = 0
    for first, last in spans:
        if groups and first <= reach:
            groups[-1] = (groups[-1][0], first)
            reach = max(reach, last)
        else:
            groups.append((first, first))
            reach = last
    return groups


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
    """Every key a job stored without payloads (unordered), in one round trip."""
    with db.session() as session:
        keys: list[int] = keys_stored(session, job_id).tolist()
        return keys


def keys_stored(session: Session, job_id: uuid.UUID) -> np.ndarray:
    """Every key in a job's blocks as this transaction sees them, unordered, each as often as stored."""
    return _unpacked(session.scalars(select(RowBlock.keys).where(RowBlock.job_id == job_id)).all())


def _unpacked(blocks: Sequence[bytes]) -> np.ndarray:
    if not blocks:
        return np.zeros(0, dtype=np.int64)
    return np.concatenate([np.frombuffer(data, dtype=">i8") for data in blocks]).astype(np.int64)


_JOB_SPANS = "SELECT first_key, last_key FROM row_blocks WHERE job_id = %s ORDER BY first_key FOR UPDATE"


def compact(db: Database, job_id: uuid.UUID, proceed: Callable[[Session], bool] | None = None) -> int:
    """Merge a job's blocks that overlap in the key into sorted runs of BLOCK_KEYS that do not, so that a
    page reads one block and an export reads them in order, none sorted. Run once a sharded job's shards
    are all stored (after its finalize; idempotent): its shards fix the first sectors, the lowest bits of
    the key, so each shard's block spans nearly the whole key. Readers never depend on it: they sort what
    overlaps. A key stored twice is kept once (logged; found next to itself once sorted: numpy 2.4's
    `unique` hashes, far slower than the sort on an expert enumeration's keys).
    `proceed(session)` runs first in the merge's transaction (a worker's locks the job and checks that it
    still wants its rows); False merges nothing.
    Returns how many blocks the job had before, 0 when they were already apart or nothing was merged."""
    with db.session() as session:
        if proceed is not None and not proceed(session):
            return 0
        cursor = driver_connection(session).cursor()
        spans = cursor.execute(_JOB_SPANS, (job_id,)).fetchall()
        if len(_overlapping(spans)) == len(spans):
            return 0
        keys = np.sort(keys_stored(session, job_id))
        distinct = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys
        if len(distinct) < len(keys):
            log.warning("job %s stored %d keys twice: kept once", job_id, len(keys) - len(distinct))
        session.execute(delete(RowBlock).where(RowBlock.job_id == job_id))
        store_keys(session, job_id, distinct)
    return len(spans)


#: rows deleted per transaction (an expert enumeration stores about a million)
DELETE_CHUNK = 20_000

# a range of the key, bounded once by the chunk's last key (an InitPlan): an `IN (subquery)` form was
# planned on stale statistics as a nested loop that rescanned the chunk for every row of the job (a retry
# of a million rows ran for minutes on a fresh database)
_DELETE_ROWS = text(
    """
    DELETE FROM rows WHERE job_id = :job_id AND key <= (
        SELECT max(key) FROM (
            SELECT key FROM rows WHERE job_id = :job_id ORDER BY key LIMIT :limit
        ) AS chunk
    )
    """
)

# the blocks holding about `limit` keys, the first block whatever its size
_DELETE_BLOCKS = text(
    """
    DELETE FROM row_blocks WHERE job_id = :job_id AND first_key <= (
        SELECT coalesce(max(first_key) FILTER (WHERE total <= :limit), min(first_key)) FROM (
            SELECT first_key, sum(count) OVER (ORDER BY first_key) AS total
            FROM row_blocks WHERE job_id = :job_id
        ) AS running
    )
    RETURNING count
    """
)


def delete_rows(
    db: Database,
    job_id: uuid.UUID,
    keep_going: Callable[[Session], bool],
    chunk: int = DELETE_CHUNK,
) -> tuple[int, bool]:
    """Delete every row and block a job stored, about `chunk` keys per transaction, so that no statement
    runs long (the one way rows are deleted: retention's purge, and a retried job's worker before it
    plans again). `keep_going(session)` runs first in each chunk's transaction (a purge holds its lock, a
    job its lease); False stops. Returns how many keys went, and whether they all did."""
    deleted = 0
    for delete_chunk in (_delete_row_chunk, _delete_block_chunk):
        more = True
        while more:
            with db.session() as session:
                if not keep_going(session):
                    return deleted, False
                done, more = delete_chunk(session, job_id, chunk)
            deleted += done
    return deleted, True


def _delete_row_chunk(session: Session, job_id: uuid.UUID, chunk: int) -> tuple[int, bool]:
    done = rowcount(session.execute(_DELETE_ROWS, {"job_id": job_id, "limit": chunk}))
    return done, done == chunk


def _delete_block_chunk(session: Session, job_id: uuid.UUID, chunk: int) -> tuple[int, bool]:
    counts = session.scalars(_DELETE_BLOCKS, {"job_id": job_id, "limit": chunk}).all()
    return sum(counts), bool(counts)
