"""A page of a batch's items (store.batches.page_of_items) ends at its limit, or early once its items'
results come to its bytes: at least one item, none after the one that reaches them, and the pages after
it cover every item once."""

from __future__ import annotations

import json
import uuid

from sqlalchemy import update

from store import batches as batch_store
from store import keys
from store.db import Database
from store.models import Job

#: the items, in order: the params of each (None: rejected); identical params share one job
PARAMS: list[dict | None] = [
    {"dice": 3, "faces": 4},
    {"dice": 3, "faces": 4},
    None,
    {"dice": 3, "faces": 5},
    {"dice": 3, "faces": 4},
    {"dice": 3, "faces": 6},
    None,
    {"dice": 3, "faces": 6},
]
#: each job's result, by its faces: a list whose JSON text (as PostgreSQL writes jsonb) has a known size
RESULTS = {4: 1000, 5: 10, 6: 3000}


def _result(length: int) -> dict:
    return {"pad": "x" * length}


def _size(length: int) -> int:
    return len(json.dumps(_result(length)))  # jsonb's text: `{"pad": "xx…"}`, as json.dumps writes it


def _made(db: Database) -> uuid.UUID:
    """The batch, its jobs succeeded with their results."""
    with db.session() as session:
        owner = keys.create_key(session, name="batch pages").id
        items = [
            batch_store.NewItem(f"i{n}", params, None if params else {"params": ["bad"]})
            for n, params in enumerate(PARAMS)
        ]
        batch, _, _ = batch_store.create_batch(
            session, owner_id=owner, kind="dice", items=items, time_limit=60
        )
        for faces, length in RESULTS.items():
            session.execute(
                update(Job)
                .where(Job.owner_id == owner, Job.params["faces"].as_integer() == faces)
                .values(state="succeeded", result=_result(length))
            )
        return batch.id


def _item_size(position: int) -> int:
    params = PARAMS[position]
    return 0 if params is None else _size(RESULTS[params["faces"]])


def _pages(db: Database, batch_id: uuid.UUID, limit: int, max_bytes: int, states=None) -> list[list[int]]:
    pages, after = [], -1
    while True:
        with db.session() as session:
            page = batch_store.page_of_items(
                session, batch_id, after=after, limit=limit, states=states, max_bytes=max_bytes
            )
        positions = [item.position for item, _ in page.items]
        pages.append(positions)
        assert len(positions) <= limit
        if not page.more:
            return pages
        after = positions[-1]


def _expected(positions: list[int], limit: int, max_bytes: int) -> list[list[int]]:
    """The same pages, cut in Python."""
    pages: list[list[int]] = [[]]
    total = 0
    for position in positions:
        if pages[-1] and (len(pages[-1]) == limit or (max_bytes and total >= max_bytes)):
            pages.append([])
            total = 0
        pages[-1].append(position)
        total += _item_size(position)
    return pages


def test_pages_end_at_their_bytes_and_cover_every_item_once(isolated_db: Database) -> None:
    batch_id = _made(isolated_db)
    every = list(range(len(PARAMS)))
    for limit in (1, 2, 3, 50):
        for max_bytes in (0, 1, _size(1000), _size(1000) + 1, 2 * _size(1000) + 50, 4000, 10**9):
            found = _pages(isolated_db, batch_id, limit, max_bytes)
            assert found == _expected(every, limit, max_bytes), (limit, max_bytes)
            assert sum(found, []) == every


def test_an_item_past_the_bytes_is_shown_and_ends_its_page(isolated_db: Database) -> None:
    batch_id = _made(isolated_db)
    found = _pages(isolated_db, batch_id, 50, 1)
    assert found == [[0], [1], [2, 3], [4], [5], [6, 7]], "a rejected item has no result: no bytes"
    assert _pages(isolated_db, batch_id, 50, _size(3000) - 1) == [[0, 1, 2, 3, 4], [5], [6, 7]]


def test_a_state_filter_pages_the_same_way(isolated_db: Database) -> None:
    batch_id = _made(isolated_db)
    succeeded = [n for n, params in enumerate(PARAMS) if params is not None]
    found = _pages(isolated_db, batch_id, 50, 2 * _size(1000), states=["succeeded"])
    assert found == _expected(succeeded, 50, 2 * _size(1000))
    assert _pages(isolated_db, batch_id, 50, 1, states=["rejected"]) == [[2, 6]], "no result, no bytes"
