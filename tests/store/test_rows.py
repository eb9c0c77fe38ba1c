"""A page of stored rows with filters on their key's bit fields (store.rows): PostgreSQL knows how many
rows each field matches (statistics the kind asks for, made at migration: services.schema), so a page
reads the primary key in order instead of sorting every row of the job. Rows with payloads are written
and read back the same way."""

from __future__ import annotations

import json

from sqlalchemy import text
from sqlalchemy.dialects import postgresql

from store import keys, rows
from store.db import Database
from store.models import Row
from tests.store.test_tallies import new_job

SECTORS = 18


def code(n: int) -> int:
    """A board: sector s holds (n // 6**s) % 6."""
    return sum(((n // 6**s) % 6) << (3 * s) for s in range(SECTORS))


def test_a_filtered_page_walks_the_key_in_order(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job = new_job(isolated_db, owner, "planetx.enumerate")
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

    fields = [rows.KeyBits(shift=3 * 2, mask=7, value=1), rows.KeyBits(shift=3 * 0, mask=7, value=4)]
    found, _ = rows.page(isolated_db, job, fields, 50, None)
    codes = [key for key, payload in found]
    assert {payload for _, payload in found} == {None}
    expected = sorted(c for c in map(code, range(60000)) if (c >> 6) & 7 == 1 and c & 7 == 4)[:50]
    assert codes == expected

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


def test_a_stream_gives_every_matching_code_in_order_in_chunks(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
    job, other = (new_job(isolated_db, owner, "planetx.enumerate") for _ in range(2))
    with isolated_db.session() as session:
        for target, count in ((job, 5000), (other, 300)):
            session.execute(
                text(
                    "INSERT INTO rows (job_id, key) SELECT :job, "
                    + " + ".join(f"(((i / {6**s}) % 6) << {3 * s})" for s in range(SECTORS))
                    + " FROM generate_series(0::bigint, :last) AS i"
                ),
                {"job": target, "last": count - 1},
            )
    every = sorted(map(code, range(5000)))
    chunks = list(rows.stream(isolated_db, job, [], chunk=1000))
    assert [len(c) for c in chunks] == [1000] * 5 and [c for chunk in chunks for c in chunk] == every
    fields = [rows.KeyBits(shift=3 * 1, mask=7, value=2), rows.KeyBits(shift=0, mask=7, value=5)]
    matching = [c for chunk in rows.stream(isolated_db, job, fields, chunk=7) for c in chunk]
    assert matching == [c for c in every if (c >> 3) & 7 == 2 and c & 7 == 5] and matching


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
    assert [k for chunk in rows.stream(isolated_db, job, []) for k in chunk] == [k for k, _ in ordered]
    assert sorted(rows.all_keys(isolated_db, job)) == [k for k, _ in ordered]
    keys_only, _ = rows.page(isolated_db, job, [], 10, None, payloads=False)
    assert keys_only == [(key, None) for key, _ in ordered]


def test_the_statistics_a_kind_asks_for_are_made_once(isolated_db: Database) -> None:
    """services.schema.migrate made every registered kind's (Planet X: one per sector); asking again
    makes only what is missing."""
    with isolated_db.session() as session:
        made = set(
            session.scalars(text("SELECT stxname FROM pg_statistic_ext WHERE stxrelid = 'rows'::regclass"))
        )
    assert {f"rows_boards_{n}" for n in range(1, SECTORS + 1)} <= made
    assert rows.ensure_statistics(isolated_db, {"boards": ["(key >> 3) & 7"]}) == []
    assert rows.ensure_statistics(isolated_db, {"testrows": ["key & 1"]}) == ["rows_testrows_1"]
    assert rows.ensure_statistics(isolated_db, {"testrows": ["key & 1"]}) == []


def _export_rows(db: Database, count: int):
    with db.session() as session:
        owner = keys.create_key(session, name="o").id
    job = new_job(db, owner, "planetx.enumerate")
    with db.session() as session:
        rows.copy_rows(session, job, [code(n) for n in range(count)])
    return job


def test_a_jobs_fresh_rows_are_read_in_key_order_not_sorted(isolated_db: Database) -> None:
    """Before PostgreSQL has statistics on the rows a job just stored it guesses a few thousand (the
    planner then sorted all 1,138,272 of an expert enumeration before sending the first); an export
    reads the primary key in order whatever the statistics say."""
    with isolated_db.session() as session:  # no statistics made while the test looks
        session.execute(text("ALTER TABLE rows SET (autovacuum_enabled = false)"))
    fresh = _export_rows(isolated_db, 200_000)
    query = text("EXPLAIN SELECT key FROM rows WHERE job_id = :j ORDER BY key")
    with isolated_db.session() as session:
        guessed = "\n".join(session.scalars(query, {"j": fresh}))
        rows.read_in_key_order(session)
        planned = "\n".join(session.scalars(query, {"j": fresh}))
    assert "Sort" in guessed, guessed  # what PostgreSQL chose on its own
    assert "Sort" not in planned and "rows_pkey" in planned, planned


def test_rows_made_visible_are_read_from_the_primary_key_alone(isolated_db: Database) -> None:
    """A job's fresh rows are read from the heap row by row; once made visible (a finalize's VACUUM)
    from the primary key alone."""
    with isolated_db.session() as session:  # nothing but the test's VACUUM sets the visibility map
        session.execute(text("ALTER TABLE rows SET (autovacuum_enabled = false)"))
    job = _export_rows(isolated_db, 20_000)
    query = text("EXPLAIN (ANALYZE, FORMAT JSON) SELECT key FROM rows WHERE job_id = :j ORDER BY key")

    def heap_fetches() -> int:
        with isolated_db.session() as session:
            rows.read_in_key_order(session)
            plan = session.scalar(query, {"j": job})[0]["Plan"]
        assert plan["Node Type"] == "Index Only Scan" and plan["Actual Rows"] == 20_000, plan
        return plan["Heap Fetches"]

    assert heap_fetches() == 20_000
    rows.make_visible(isolated_db)
    assert heap_fetches() == 0
