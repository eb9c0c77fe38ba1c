"""Lists of jobs, newest first in keyset pages, with the filters the API (`GET /jobs`) and the dashboard
offer, each served by an index at any table size (migration 0009).

Every filter is an equality on the leading columns of an index that then orders by (created_at, id):
owner, kind and state (owner first for clients). Several states or kinds (or a kind without a state) are
one branch per (kind, state), each reading at most a page from its index, merged by PostgreSQL. An id
prefix is a key range on the primary key. The page after a cursor starts at a row comparison,
`(created_at, id) < (…)`, which the index seeks to instead of walking past the pages before it."""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, literal, select, tuple_, union_all
from sqlalchemy.orm import Session, aliased

from core.pages import JOB_CURSOR
from core.states import JOB_STATES
from store.models import Batch, Job

UUID_HYPHENS = (8, 13, 18, 23)
_HEX = re.compile(r"[0-9a-f]{1,32}")


@dataclass(frozen=True)
class Page:
    items: list[Job]
    next_cursor: str | None


@dataclass(frozen=True)
class JobFilter:
    #: any of these states (none: any state)
    states: Sequence[str] = field(default_factory=tuple)
    #: any of these kinds (none: any kind)
    kinds: Sequence[str] = field(default_factory=tuple)
    owner_id: int | None = None
    #: a whole job id, or its first characters (hyphens where a job id has them, or none at all)
    id_query: str | None = None


_CURSOR = re.compile(JOB_CURSOR)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def encode_cursor(row: Job | Batch) -> str:
    """The page after a job (or a batch: store.batches pages on the same keys)."""
    return f"{(row.created_at - _EPOCH) // _MICROSECOND}_{row.id.hex}"


def decode_cursor(cursor: str) -> tuple[datetime, uuid.UUID]:
    """Raises ValueError for text that is not a cursor."""
    if not _CURSOR.fullmatch(cursor):
        raise ValueError(f"not a cursor: {cursor[:40]!r}")
    micros, _, job_id = cursor.partition("_")
    return _EPOCH + int(micros) * _MICROSECOND, uuid.UUID(hex=job_id)


def id_range(query: str) -> tuple[uuid.UUID, uuid.UUID | None]:
    """The ids that start with `query`, as [low, high) (high None: up to the largest id). `1a2b3c4d` is
    1a2b3c4d-0000-0000-0000-000000000000 up to 1a2b3c4e-0000-…; `1a2` is 1a200000-… up to 1a300000-….
    Raises ValueError for text no job id starts with."""
    text = query.strip().lower()
    if "-" in text and any((char == "-") != (i in UUID_HYPHENS) for i, char in enumerate(text)):
        raise ValueError("hyphens go where a job id has them")
    digits = text.replace("-", "")
    if not _HEX.fullmatch(digits) or len(text) > 36:
        raise ValueError("a job id is 32 hexadecimal digits")
    spare = 4 * (32 - len(digits))
    low, high = int(digits, 16) << spare, (int(digits, 16) + 1) << spare
    return uuid.UUID(int=low), uuid.UUID(int=high) if high < 1 << 128 else None


def _conditions(where: JobFilter) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if where.owner_id is not None:
        conditions.append(Job.owner_id == where.owner_id)
    if where.id_query:
        low, high = id_range(where.id_query)
        conditions.append(Job.id >= low)
        if high is not None:
            conditions.append(Job.id < high)
    return conditions


def _newest_first(query: Select[Job], columns: Any, limit: int) -> Select[Job]:
    return query.order_by(columns.created_at.desc(), columns.id.desc()).limit(limit)


def jobs_query(where: JobFilter, *, limit: int, cursor: str | None = None) -> Select[Job]:
    """The query of a page (`limit` rows). Raises ValueError for a cursor this service did not make or an
    id query no job id starts with."""
    conditions = _conditions(where)
    if cursor:
        created, job_id = decode_cursor(cursor)
        after = tuple_(literal(created, Job.created_at.type), literal(job_id, Job.id.type))
        conditions.append(tuple_(Job.created_at, Job.id) < after)
    kinds: list[str | None] = list(dict.fromkeys(where.kinds)) or [None]
    # a kind without a state: every state, so each branch leads with (owner,) kind, state
    states: list[str | None] = list(dict.fromkeys(where.states)) or (
        list(JOB_STATES) if where.kinds else [None]
    )
    branches = [
        _newest_first(select(Job).where(*conditions, *_equal(kind, state)), Job, limit)
        for kind, state in itertools.product(kinds, states)
    ]
    if len(branches) == 1:
        return branches[0]
    merged = union_all(*branches).subquery("branches")
    return _newest_first(select(aliased(Job, merged)), merged.c, limit)


def _equal(kind: str | None, state: str | None) -> list[ColumnElement[bool]]:
    return [*([Job.kind == kind] if kind else []), *([Job.state == state] if state else [])]


def find_jobs(session: Session, where: JobFilter, *, limit: int = 20, cursor: str | None = None) -> Page:
    """Newest first, keyset-paginated on (created_at, id). Raises ValueError for a cursor this service did
    not make or an id query no job id starts with."""
    rows = list(session.scalars(jobs_query(where, limit=limit + 1, cursor=cursor)))
    items = rows[:limit]
    return Page(items, encode_cursor(items[-1]) if len(rows) > limit and items else None)
