"""Large results: their growing list is taken out past a size, stored as rows and paged in order."""

from __future__ import annotations

import pytest

from store import jobs, keys, results
from store.db import Database


def test_a_small_result_stays_whole_and_a_large_one_is_split() -> None:
    small = {"games": [{"i": 1}], "avg": 1.0}
    assert results.split(small, "games", 1000) == results.Split(small)
    assert results.split(small, None, 10).result is small, "kinds without a growing list stay whole"
    large = {"games": [{"i": n} for n in range(100)], "avg": 2.5}
    stored = results.split(large, "games", 200)
    assert stored.result == {"games": None, "avg": 2.5, "paged": {"field": "games", "count": 100}}
    assert stored.items == large["games"]
    assert results.split(large, "games", 0).result is large, "0 = never split"


@pytest.fixture
def job_id(isolated_db: Database):
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
        job, _ = jobs.create_job(session, owner_id=owner, kind="mastermind.play", params={}, time_limit=60)
    return job.id


def test_items_page_in_order_with_a_cursor(isolated_db: Database, job_id) -> None:
    with isolated_db.session() as session:
        results.store_items(session, job_id, [{"i": n} for n in range(25)])
    pages, cursor = [], -1
    while cursor is not None:
        with isolated_db.session() as session:
            items, cursor = results.page(session, job_id, cursor, 10)
        pages.append(items)
    assert [len(page) for page in pages] == [10, 10, 5]
    assert [item["i"] for page in pages for item in page] == list(range(25))
