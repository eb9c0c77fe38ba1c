"""Reading a job's stored rows (integer codes, e.g. Planet X boards): keyset pages and streamed exports.

A kind that stores rows packs them into bigint codes; filters match bit fields of the code, which the kind
describes (kinds.base.Rows.filters), so this module knows no kind."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, func, literal_column, select, text
from sqlalchemy.dialects import postgresql
from sqlalchemy.orm import Session

from core.states import JobState
from store.db import Database
from store.models import Board, Job


@dataclass(frozen=True)
class CodeField:
    """A row matches when `(code >> shift) & mask == value`."""

    shift: int
    mask: int
    value: int

    def condition(self) -> ColumnElement[bool]:
        # integer literals, not parameters: PostgreSQL has no `bigint >> smallint` for a guessed type
        shift, mask, value = (literal_column(str(int(n))) for n in (self.shift, self.mask, self.value))
        return Board.code.op(">>")(shift).op("&")(mask) == value


def page(
    db: Database, job_id: uuid.UUID, filters: Sequence[CodeField], limit: int, after: int | None
) -> tuple[list[int], int | None]:
    conditions = [field.condition() for field in filters]
    query = (
        select(Board.code).where(Board.job_id == job_id, *conditions).order_by(Board.code).limit(limit + 1)
    )
    if after is not None:
        query = query.where(Board.code > after)
    with db.session() as session:
        codes = list(session.scalars(query))
    more = len(codes) > limit
    codes = codes[:limit]
    return codes, codes[-1] if more and codes else None


def stream(
    db: Database, job_id: uuid.UUID, filters: Sequence[CodeField], chunk: int = 10_000
) -> Iterator[list[int]]:
    """Every code, in order, in chunks, through a server-side cursor: constant memory at any size.

    The driver's own named cursor, binary: the ORM's result rows cost 6x more (an expert enumeration's
    1,138,272 codes: about 11 s through the ORM, under 2 s this way, the machine loaded)."""
    dialect = postgresql.dialect()
    where = "".join(f" AND {field.condition().compile(dialect=dialect)}" for field in filters)
    query = f"SELECT code FROM boards WHERE job_id = %s{where} ORDER BY code"
    with db.session() as session:
        connection = session.connection().connection.driver_connection
        with connection.cursor(name="zolve_rows_stream", binary=True) as cursor:
            cursor.itersize = chunk
            cursor.execute(query, (job_id,))
            while batch := cursor.fetchmany(chunk):
                yield [code for (code,) in batch]


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


def all_codes(db: Database, job_id: uuid.UUID) -> list[int]:
    """Every code a job stored (unordered), in one round trip."""
    with db.session() as session:
        return list(session.scalars(select(Board.code).where(Board.job_id == job_id)))


#: rows deleted per transaction (an expert enumeration stores about a million)
DELETE_CHUNK = 20_000

# a range of the key, bounded once by the chunk's last code (an InitPlan): an `IN (subquery)` form was
# planned on stale statistics as a nested loop that rescanned the chunk for every row of the job (a retry
# of 1M rows ran for over 8 minutes on a fresh database)
_DELETE_ROWS = text(
    """
    DELETE FROM boards WHERE job_id = :job_id AND code <= (
        SELECT max(code) FROM (
            SELECT code FROM boards WHERE job_id = :job_id ORDER BY code LIMIT :limit
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
            done = session.execute(_DELETE_ROWS, {"job_id": job_id, "limit": chunk}).rowcount
        deleted += done
        if done < chunk:
            return deleted, True
