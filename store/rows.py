"""Reading a job's stored rows (Planet X boards): keyset pages and streamed exports."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from sqlalchemy import ColumnElement, func, literal_column, select

from store.db import Database
from store.models import Board, Job

BITS = 3


def object_at(sector: int, obj: int) -> ColumnElement[bool]:
    """SQL: the board holds object `obj` in `sector` (1-based)."""
    # integer literals, not parameters: PostgreSQL has no `bigint >> smallint` for a guessed type
    shift, wanted = literal_column(str(BITS * (int(sector) - 1))), literal_column(str(int(obj)))
    return Board.code.op(">>")(shift).op("&")(literal_column("7")) == wanted


def page(
    db: Database, job_id: uuid.UUID, filters: list[ColumnElement[bool]], limit: int, after: int | None
) -> tuple[list[int], int | None]:
    query = select(Board.code).where(Board.job_id == job_id, *filters).order_by(Board.code).limit(limit + 1)
    if after is not None:
        query = query.where(Board.code > after)
    with db.session() as session:
        codes = list(session.scalars(query))
    more = len(codes) > limit
    codes = codes[:limit]
    return codes, codes[-1] if more and codes else None


def stream(
    db: Database, job_id: uuid.UUID, filters: list[ColumnElement[bool]], chunk: int = 10_000
) -> Iterator[list[int]]:
    """Every code, in order, in chunks, through a server-side cursor: constant memory at any size."""
    query = select(Board.code).where(Board.job_id == job_id, *filters).order_by(Board.code)
    with db.session() as session:
        result = session.execute(query.execution_options(stream_results=True, yield_per=chunk))
        yield from result.scalars().partitions(chunk)


def stored_enumeration(db: Database, kind: str, mode: str) -> uuid.UUID | None:
    """Whose rows hold the complete enumeration of a mode (no extra constraints), if one succeeded.

    Enumerations are public facts, not a client's data: any job may read them (as the cache does)."""
    query = (
        select(Job.rows_job_id)
        .where(
            Job.kind == kind,
            Job.state == "succeeded",
            Job.rows_job_id.isnot(None),
            Job.params["mode"].astext == mode,
            func.coalesce(func.jsonb_array_length(Job.params["constraints"]), 0) == 0,
        )
        .order_by(Job.finished_at.desc())
        .limit(1)
    )
    with db.session() as session:
        return session.scalar(query)


def all_codes(db: Database, job_id: uuid.UUID) -> list[int]:
    """Every code a job stored (unordered), in one round trip."""
    with db.session() as session:
        return list(session.scalars(select(Board.code).where(Board.job_id == job_id)))
