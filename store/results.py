"""Results too large to return whole: their growing list (e.g. every game of a big `mastermind.play`)
is stored as rows, one per item, and paged; the result keeps everything else and says where the items
went: `result[field]` is None and `result["paged"]` is `{"field": field, "count": n}`."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from store.models import ResultItem


@dataclass
class Split:
    """A result as stored, and the items to store beside it (none when it is small enough)."""

    result: dict[str, Any] | None
    items: list[Any] = field(default_factory=list)


def split(result: dict[str, Any] | None, items_field: str | None, max_bytes: int) -> Split:
    """Take the items out of a result whose JSON is over `max_bytes` (only its list `items_field`)."""
    if result is None or not items_field or not isinstance(result.get(items_field), list) or not max_bytes:
        return Split(result)
    if len(json.dumps(result, default=str)) <= max_bytes:
        return Split(result)
    items = result[items_field]
    paged = {**result, items_field: None, "paged": {"field": items_field, "count": len(items)}}
    return Split(paged, items)


def store_items(session: Session, job_id: uuid.UUID, items: list[Any]) -> None:
    if items:
        rows = [{"job_id": job_id, "position": n, "item": item} for n, item in enumerate(items)]
        session.execute(insert(ResultItem), rows)


def page(session: Session, job_id: uuid.UUID, after: int, limit: int) -> tuple[list[Any], int | None]:
    """Items in order after position `after`; the cursor of the next page, if any."""
    rows = session.execute(
        select(ResultItem.position, ResultItem.item)
        .where(ResultItem.job_id == job_id, ResultItem.position > after)
        .order_by(ResultItem.position)
        .limit(limit + 1)
    ).all()
    more = len(rows) > limit
    rows = rows[:limit]
    return [item for _, item in rows], rows[-1][0] if more and rows else None
