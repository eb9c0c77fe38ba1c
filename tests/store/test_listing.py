"""Job lists (store.listing): every filter of GET /jobs and the dashboard returns, page by page, exactly what
a plain Python filter over the test's own jobs returns, newest first; id prefixes are key ranges."""

from __future__ import annotations

import itertools
import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import insert

from core.states import JOB_STATES
from store import keys, listing
from store.db import Database
from store.jobs import job_row, params_hash
from store.models import Job

KINDS = ("dice", "taiji.solve", "mastermind.play")


# -- id prefixes (pure) ---------------------------------------------------------------------------
def test_an_id_prefix_is_a_key_range() -> None:
    assert listing.id_range("1a2b3c4d") == (
        uuid.UUID("1a2b3c4d-0000-0000-0000-000000000000"),
        uuid.UUID("1a2b3c4e-0000-0000-0000-000000000000"),
    )
    assert listing.id_range(" 1A2 ") == (
        uuid.UUID("1a200000-0000-0000-0000-000000000000"),
        uuid.UUID("1a300000-0000-0000-0000-000000000000"),
    )
    assert listing.id_range("1a2b3c4d-5e") == (
        uuid.UUID("1a2b3c4d-5e00-0000-0000-000000000000"),
        uuid.UUID("1a2b3c4d-5f00-0000-0000-000000000000"),
    )
    assert listing.id_range("1a2b3c4d-") == listing.id_range("1a2b3c4d")
    assert listing.id_range("1a2b3c4d5e") == listing.id_range("1a2b3c4d-5e"), "hyphens may be left out"
    assert listing.id_range("0fff") == (uuid.UUID(int=0x0FFF << 112), uuid.UUID(int=0x1000 << 112))


def test_the_last_prefixes_have_no_upper_bound() -> None:
    assert listing.id_range("f") == (uuid.UUID("f0000000-0000-0000-0000-000000000000"), None)
    whole = "ffffffff-ffff-ffff-ffff-ffffffffffff"
    assert listing.id_range(whole) == (uuid.UUID(whole), None)
    some = str(uuid.uuid4())
    low, high = listing.id_range(some)
    assert low == uuid.UUID(some) and high == uuid.UUID(int=uuid.UUID(some).int + 1)


@pytest.mark.parametrize(
    "text",
    ["", "-", "xyz", "1a2g", "1a2b-3c", "-1a2b", "1a2b3c4d--", "1a2b3c4d-5e6f7-", "0" * 33, "é", "1 2"],
)
def test_text_no_id_starts_with_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        listing.id_range(text)


def test_a_full_id_with_a_hyphen_too_many_is_refused() -> None:
    with pytest.raises(ValueError):
        listing.id_range(str(uuid.uuid4()) + "-")


# -- filters against the database ------------------------------------------------------------------
@pytest.fixture
def made(isolated_db: Database) -> tuple[Database, list[int], list[Job]]:
    """90 jobs of three owners, three kinds and every state, created over a few minutes with ties."""
    rng = random.Random(22)
    with isolated_db.session() as session:
        owners = [keys.create_key(session, name=f"owner {n}").id for n in range(3)]
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rows = []
    for n in range(90):
        kind = rng.choice(KINDS)
        job = job_row(rng.choice(owners), kind, {"n": n}, params_hash(kind, {"n": n}), 60)
        rows.append(
            {
                "id": job.id,
                "owner_id": job.owner_id,
                "kind": kind,
                "params": job.params,
                "params_hash": job.params_hash,
                "time_limit": 60,
                "state": rng.choice(JOB_STATES),
                # every third job shares its created_at with another: the id breaks the tie
                "created_at": start + timedelta(seconds=rng.randrange(60)),
            }
        )
    with isolated_db.session() as session:
        session.execute(insert(Job), rows)
    return isolated_db, owners, [Job(**row) for row in rows]


def expected(jobs: list[Job], where: listing.JobFilter) -> list[uuid.UUID]:
    """The plain filter: no index, no SQL."""

    def keep(job: Job) -> bool:
        if where.owner_id is not None and job.owner_id != where.owner_id:
            return False
        if where.states and job.state not in where.states:
            return False
        if where.kinds and job.kind not in where.kinds:
            return False
        return not where.id_query or str(job.id).replace("-", "").startswith(
            where.id_query.strip().lower().replace("-", "")
        )

    return [job.id for job in sorted(filter(keep, jobs), key=lambda j: (j.created_at, j.id), reverse=True)]


def listed(db: Database, where: listing.JobFilter, limit: int) -> list[uuid.UUID]:
    """Every page, following the cursors."""
    ids, cursor = [], None
    while True:
        with db.session() as session:
            page = listing.find_jobs(session, where, limit=limit, cursor=cursor)
        assert len(page.items) <= limit
        ids += [job.id for job in page.items]
        if page.next_cursor is None:
            return ids
        assert len(page.items) == limit
        cursor = page.next_cursor


STATE_FILTERS = [
    (),
    *((state,) for state in JOB_STATES),
    ("failed", "cancelled"),
    ("queued", "running", "failed"),
]

KIND_FILTERS = [(), *((kind,) for kind in KINDS), ("nope",), ("dice", "mastermind.play"), (*KINDS, "nope")]


def test_every_filter_combination_lists_what_a_plain_filter_finds(made) -> None:
    db, owners, jobs = made
    for owner, states, kinds in itertools.product([None, owners[0]], STATE_FILTERS, KIND_FILTERS):
        where = listing.JobFilter(states=states, kinds=kinds, owner_id=owner)
        assert listed(db, where, 7) == expected(jobs, where), where


@pytest.mark.parametrize("limit", [1, 4, 100])
def test_pages_of_any_size_cover_the_list_once(made, limit: int) -> None:
    db, owners, jobs = made
    for where in (
        listing.JobFilter(),
        listing.JobFilter(owner_id=owners[1]),
        listing.JobFilter(states=("succeeded", "failed", "cancelled"), owner_id=owners[2]),
        listing.JobFilter(kinds=("dice",)),
        listing.JobFilter(kinds=("taiji.solve", "dice"), states=("succeeded", "queued")),
    ):
        assert listed(db, where, limit) == expected(jobs, where), where


def test_id_prefixes_find_the_jobs_whose_ids_start_with_them(made) -> None:
    db, owners, jobs = made
    some = str(jobs[5].id)
    for prefix in (
        some[0],
        some[:2],
        some[:8],
        some[:9],
        some[:13],
        some,
        some.replace("-", ""),
        some.upper(),
    ):
        for owner, states in ((None, ()), (jobs[5].owner_id, ()), (None, (jobs[5].state, "failed"))):
            where = listing.JobFilter(states=states, owner_id=owner, id_query=prefix)
            found = listed(db, where, 3)
            assert found == expected(jobs, where), where
            assert jobs[5].id in found
    with db.session() as session, pytest.raises(ValueError):
        listing.find_jobs(session, listing.JobFilter(id_query="1a2b-3c"))


def test_a_cursor_from_elsewhere_is_refused(made) -> None:
    db, _, _ = made
    for cursor in ("nope", "bm9wZQ", "MjAyNi0wMS0wMXxub3QtYS11dWlk"):
        with db.session() as session, pytest.raises(ValueError):
            listing.find_jobs(session, listing.JobFilter(), cursor=cursor)
