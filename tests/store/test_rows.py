"""A job's stored rows (store.rows). Keys alone go into blocks: a shard's sorted keys in one value,
pages and exports reading the blocks whose spans overlap together, in key order, filtered in bulk, and a
finished job's blocks merged into runs that do not overlap (compact). Rows with payloads are a row each:
a page with filters on their key's bit fields reads the primary key in order, PostgreSQL knowing how
many rows each field matches (statistics a kind asks for, made at migration: services.schema)."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import func, select, text
from sqlalchemy.dialects import postgresql

from store import keys, rows
from store.db import Database
from store.models import Row, RowBlock
from tests.store.test_tallies import new_job

SECTORS = 18
#: the fields the filtered tests ask for: sector 3 holds object 1, sector 1 object 4
FIELDS = [rows.KeyBits(shift=3 * 2, mask=7, value=1), rows.KeyBits(shift=3 * 0, mask=7, value=4)]


def code(n: int) -> int:
    """A board: sector s holds (n // 6**s) % 6."""
    return sum(((n // 6**s) % 6) << (3 * s) for s in range(SECTORS))


def matching(codes: list[int]) -> list[int]:
    return sorted(c for c in codes if (c >> 6) & 7 == 1 and c & 7 == 4)


def _job(db: Database) -> uuid.UUID:
    with db.session() as session:
        owner = keys.create_key(session, name="o").id
    return new_job(db, owner, "planetx.enumerate")


def _store_as_shards(db: Database, job: uuid.UUID, codes: list[int]) -> None:
    """As a sharded enumeration stores them: a transaction per shard, the shards fixing the lowest
    field (sectors 1 and 2), so that every shard's block spans nearly the whole key."""
    for shard in sorted({c & 0o77 for c in codes}):
        with db.session() as session:
            rows.copy_rows(session, job, [c for c in codes if c & 0o77 == shard])


def _every_page(db: Database, job: uuid.UUID, fields: list[rows.RowFilter], limit: int) -> list[int]:
    found, after = [], None
    while True:
        page, after = rows.page(db, job, fields, limit, after, payloads=False)
        assert len(page) <= limit and {payload for _, payload in page} <= {None}
        found += [key for key, _ in page]
        if after is None:
            return found


@pytest.mark.parametrize("merged", [False, True], ids=["shards' blocks", "merged"])
def test_keys_are_paged_streamed_and_filtered_in_key_order(isolated_db: Database, merged: bool) -> None:
    job, other = _job(isolated_db), _job(isolated_db)
    codes = [code(n) for n in range(6000)]
    _store_as_shards(isolated_db, job, codes[::-1])
    _store_as_shards(isolated_db, other, [c + 1 for c in codes[:300]])
    if merged:
        assert rows.compact(isolated_db, job) == 36
    every = sorted(codes)
    assert _every_page(isolated_db, job, [], 700) == every
    assert _every_page(isolated_db, job, FIELDS, 7) == matching(codes) and matching(codes)
    first, after = rows.page(isolated_db, job, FIELDS, 3, None, payloads=False)
    assert [key for key, _ in first] == matching(codes)[:3] and after == matching(codes)[2]
    chunks = list(rows.stream(isolated_db, job, [], chunk=1000))
    assert max(map(len, chunks)) <= 1000 and [c for chunk in chunks for c in chunk] == every
    assert [c for chunk in rows.stream(isolated_db, job, FIELDS, chunk=7) for c in chunk] == matching(codes)
    assert sorted(rows.all_keys(isolated_db, job)) == every


def test_compact_merges_a_jobs_overlapping_blocks_into_runs_once(isolated_db: Database) -> None:
    job = _job(isolated_db)
    codes = [code(n) for n in range(40_000)]
    _store_as_shards(isolated_db, job, codes)
    with isolated_db.session() as session:  # a key stored twice, in a block of its own
        rows.copy_rows(session, job, [codes[200], codes[100]])
    assert rows.compact(isolated_db, job) == 37
    with isolated_db.session() as session:
        spans = session.execute(
            select(RowBlock.first_key, RowBlock.last_key, RowBlock.count)
            .where(RowBlock.job_id == job)
            .order_by(RowBlock.first_key)
        ).all()
    every = sorted(codes)
    assert [count for _, _, count in spans] == [
        rows.BLOCK_KEYS,
        rows.BLOCK_KEYS,
        40_000 - 2 * rows.BLOCK_KEYS,
    ]
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False)), "the runs do not overlap"
    assert (spans[0][0], spans[-1][1]) == (every[0], every[-1])
    assert rows.compact(isolated_db, job) == 0, "runs apart are left as they are"
    assert [int(k) for chunk in rows.key_chunks(isolated_db, job, []) for k in chunk] == every


def test_compact_merges_nothing_when_its_caller_says_no_in_its_transaction(isolated_db: Database) -> None:
    job = _job(isolated_db)
    codes = [code(n) for n in range(2000)]
    _store_as_shards(isolated_db, job, codes)
    seen: list[int] = []

    def proceed(session) -> bool:  # it reads in the merge's transaction: the blocks it would merge
        seen.append(len(rows.keys_stored(session, job)))
        return False

    assert rows.compact(isolated_db, job, proceed) == 0 and seen == [2000]
    with isolated_db.session() as session:
        assert session.scalar(select(func.count()).where(RowBlock.job_id == job)) == 36, "left as stored"
    assert rows.compact(isolated_db, job, lambda session: True) == 36


def test_a_key_stored_twice_at_the_head_of_a_block_is_refused(isolated_db: Database) -> None:
    """A shard's store that ran twice (a duplicate delivery past its lease checks) fails on the primary
    key: its block begins with the same key."""
    job = _job(isolated_db)
    with isolated_db.session() as session:
        rows.copy_rows(session, job, [30, 10, 20])
    with pytest.raises(Exception, match="row_blocks_pkey"), isolated_db.session() as session:
        rows.copy_rows(session, job, [10, 40])


def test_blocks_and_rows_are_deleted_a_chunk_at_a_time(isolated_db: Database) -> None:
    job = _job(isolated_db)
    _store_as_shards(isolated_db, job, [code(n) for n in range(3000)])
    with isolated_db.session() as session:
        rows.copy_rows(session, job, [(1, b"a"), (2, None)])
        blocks = session.scalar(select(func.count()).where(RowBlock.job_id == job))
    chunks: list[int] = []

    def keep_going(session: object) -> bool:
        chunks.append(1)
        return True

    assert rows.delete_rows(isolated_db, job, keep_going, chunk=100) == (3002, True)
    assert len(chunks) >= blocks, "a block of about 100 keys per transaction"
    with isolated_db.session() as session:
        assert session.scalar(select(func.count()).where(RowBlock.job_id == job)) == 0
        assert session.scalar(select(func.count()).where(Row.job_id == job)) == 0
    assert rows.delete_rows(isolated_db, job, lambda session: False) == (0, False)


def test_a_filtered_page_of_rows_walks_the_key_in_order(isolated_db: Database) -> None:
    """Rows a row each (a kind with payloads): with statistics on the fields its filters test,
    PostgreSQL reads the primary key in order instead of sorting every row of the job."""
    rows.ensure_statistics(isolated_db, {"testfields": ["(key >> 6) & 7", "(key >> 0) & 7"]})
    job = _job(isolated_db)
    with isolated_db.session() as session:
        session.execute(
            text(
                "INSERT INTO rows (job_id, key) SELECT :job, "
                + " + ".join(f"(((i / {6**s}) % 6) << {3 * s})" for s in range(SECTORS))
                + " FROM generate_series(0::bigint, 59999) AS i"
            ),
            {"job": job},
        )
    with isolated_db.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE rows"))

    fields = FIELDS
    found, _ = rows.page(isolated_db, job, fields, 50, None)
    codes = [key for key, payload in found]
    assert {payload for _, payload in found} == {None}
    assert codes == matching(list(map(code, range(60000))))[:50]

    query = (
        Row.__table__.select()
        .with_only_columns(Row.key)
        .where(Row.job_id == job, *(f.condition() for f in fields))
        .order_by(Row.key)
        .limit(51)
    )
    sql = str(query.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    with isolated_db.session() as session:
        plan = session.scalar(text("EXPLAIN (FORMAT JSON) " + sql))
    plan = plan if isinstance(plan, list) else json.loads(plan)
    scan = plan[0]["Plan"]["Plans"][0]
    assert scan["Node Type"] in ("Index Scan", "Index Only Scan"), scan
    assert scan["Index Name"] == "rows_pkey"
    assert scan["Plan Rows"] > 60000 / 36 / 3, "each field matches about one row in six"


def test_key_chunks_give_every_matching_key_in_order_from_one_snapshot(isolated_db: Database) -> None:
    """An export's keys: in chunks of the asked size, filtered, and none that another transaction
    stores while the export reads."""
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job, empty = (new_job(isolated_db, owner, "planetx.enumerate") for _ in range(2))
    every = sorted(map(code, range(2500)))
    with isolated_db.session() as session:
        rows.copy_rows(session, job, every[::-1])
    chunks = rows.key_chunks(isolated_db, job, [], chunk=1000)
    first = next(chunks)
    later = [every[-1] + 1, every[-1] + 2]
    with isolated_db.session() as session:  # stored while the export reads: after its snapshot
        rows.copy_rows(session, job, later)
    rest = list(chunks)
    assert [len(c) for c in [first, *rest]] == [1000, 1000, 500]
    assert [int(k) for chunk in [first, *rest] for k in chunk] == every
    fields = [rows.KeyBits(shift=3 * 1, mask=7, value=2), rows.KeyBits(shift=0, mask=7, value=5)]
    matching = [int(k) for chunk in rows.key_chunks(isolated_db, job, fields, chunk=7) for k in chunk]
    assert matching == [c for c in every + later if (c >> 3) & 7 == 2 and c & 7 == 5] and matching
    assert list(rows.key_chunks(isolated_db, empty, [])) == []


def test_rows_with_payloads_are_copied_paged_and_streamed_in_key_order(isolated_db: Database) -> None:
    """A kind whose key does not say it all stores a payload of any width (bytes of its own format)."""
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job = new_job(isolated_db, owner, "planetx.enumerate")
    made = [(key, bytes([key % 256]) * (key % 700)) for key in (5, 2, 900, 7, 1)]
    made.append((3, None))
    with isolated_db.session() as session:
        rows.copy_rows(session, job, made)
    ordered = sorted(made)
    first, cursor = rows.page(isolated_db, job, [], 4, None)
    rest, last = rows.page(isolated_db, job, [], 4, cursor)
    assert first + rest == ordered and cursor == 5 and last is None
    streamed = [row for chunk in rows.stream(isolated_db, job, [], chunk=2, payloads=True) for row in chunk]
    assert streamed == ordered
    assert rows.all_keys(isolated_db, job) == [], "no key of theirs is in a block"


def test_the_statistics_a_kind_asks_for_are_made_once(isolated_db: Database) -> None:
    """Asking again makes only what is missing; Planet X's, whose boards are now blocks, are gone
    (migration 0021)."""
    with isolated_db.session() as session:
        made = set(
            session.scalars(text("SELECT stxname FROM pg_statistic_ext WHERE stxrelid = 'rows'::regclass"))
        )
    assert not {name for name in made if name.startswith("rows_boards_")}
    assert rows.ensure_statistics(isolated_db, {"testrows": ["key & 1"]}) == ["rows_testrows_1"]
    assert rows.ensure_statistics(isolated_db, {"testrows": ["key & 1"]}) == []


def _payload_rows(db: Database, count: int) -> uuid.UUID:
    job = _job(db)
    with db.session() as session:
        rows.copy_rows(session, job, [(code(n), b"p") for n in range(count)])
    return job


def test_a_jobs_fresh_rows_are_read_in_key_order_not_sorted(isolated_db: Database) -> None:
    """Before PostgreSQL has statistics on the rows a job just stored it guesses a few thousand (the
    planner then sorted all 1,138,272 of an expert enumeration before sending the first); an export
    reads the primary key in order whatever the statistics say."""
    with isolated_db.session() as session:  # no statistics made while the test looks
        session.execute(text("ALTER TABLE rows SET (autovacuum_enabled = false)"))
    fresh = _payload_rows(isolated_db, 200_000)
    query = text("EXPLAIN SELECT key FROM rows WHERE job_id = :j ORDER BY key")
    with isolated_db.session() as session:
        guessed = "\n".join(session.scalars(query, {"j": fresh}))
        rows.read_in_key_order(session)
        planned = "\n".join(session.scalars(query, {"j": fresh}))
    assert "Sort" in guessed, guessed  # what PostgreSQL chose on its own
    assert "Sort" not in planned and "rows_pkey" in planned, planned
