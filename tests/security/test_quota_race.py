"""Issue 37, item 7: the unfinished-jobs quota holds under concurrency: 30 submits at once (or 20 batches)
with a quota of 3 leave exactly 3 unfinished jobs, the rest refused with 429."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, select

from store import keys
from store.models import Job
from tests.security.helpers import bearer_token, key_in

QUOTA = 3
DICE = {"dice": 3, "faces": 6}


@pytest.fixture
def quota_app(isolated_db, make_app):
    """The quota on a database no worker looks at: no job finishes while the test counts them (and none
    occupies the session's worker)."""
    return make_app(database_url=isolated_db.url, max_unfinished_per_key=QUOTA)


def _all_at_once(count: int, request: Callable[[], int]) -> Counter:
    barrier = threading.Barrier(count)

    def one() -> int:
        barrier.wait()
        return request()

    with ThreadPoolExecutor(count) as pool:
        return Counter(pool.map(lambda _: one(), range(count)))


def _unfinished(db, headers: dict[str, str]) -> int:
    with db.session() as session:
        owner = keys.authenticate(session, bearer_token(headers)).id
        return session.scalar(
            select(func.count())
            .select_from(Job)
            .where(Job.owner_id == owner, Job.state.in_(("queued", "running", "cancelling")))
        )


def test_thirty_concurrent_submits_leave_exactly_the_quota(quota_app, isolated_db) -> None:
    key = key_in(isolated_db)
    body = {"kind": "dice", "params": DICE, "time_limit": 60, "fresh": True}
    statuses = _all_at_once(
        30, lambda: quota_app.test_client().post("/jobs", json=body, headers=key).status_code
    )
    assert statuses == Counter({202: QUOTA, 429: 30 - QUOTA})
    assert _unfinished(isolated_db, key) == QUOTA


def test_twenty_concurrent_batches_leave_exactly_the_quota(quota_app, isolated_db) -> None:
    key = key_in(isolated_db)
    body = {"kind": "dice", "time_limit": 60, "items": [{"client_id": "a", "params": DICE}]}
    statuses = _all_at_once(
        20, lambda: quota_app.test_client().post("/batches", json=body, headers=key).status_code
    )
    assert statuses == Counter({202: QUOTA, 429: 20 - QUOTA})
    assert _unfinished(isolated_db, key) == QUOTA
