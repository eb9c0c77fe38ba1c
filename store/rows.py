"""Reading a job's stored rows (Planet X boards): keyset pages and streamed exports."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

from sqlalchemy import ColumnElement, literal_column, select

from store.db import Database
from store.models import Board

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
