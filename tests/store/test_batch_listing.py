"""Listing batches (store.batches.list_batches): everyone's, newest first, pages by (created_at, id) off an
index, never by sorting the table, and one owner's off theirs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import text
from sqlalchemy.dialects import postgresql

from store import batches as batch_store
from store import keys
from store.db import Database

BATCHES = 20_000


def _plan_nodes(plan: dict) -> list[dict]:
    return [plan, *(node for child in plan.get("Plans", []) for node in _plan_nodes(child))]


def _plan(db: Database, statement) -> list[dict]:
    sql = str(statement.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    with db.session() as session:
        plan = session.scalar(text("EXPLAIN (FORMAT JSON) " + sql))
    plan = plan if isinstance(plan, list) else json.loads(plan)
    return _plan_nodes(plan[0]["Plan"])


def test_every_clients_batches_page_off_an_index(isolated_db: Database) -> None:
    with isolated_db.session() as session:
        owners = [keys.create_key(session, name=f"owner {n}").id for n in range(4)]
    with isolated_db.session() as session:
        session.execute(
            text(
                "INSERT INTO batches (id, owner_id, kind, item_count, job_count, created_at) "
                "SELECT gen_random_uuid(), (:owners)[1 + n % 4], 'dice', 1, 1, "
                "now() - n * interval '1 second' FROM generate_series(1, :count) AS n"
            ),
            {"owners": owners, "count": BATCHES},
        )
    with isolated_db.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("ANALYZE batches"))

    with isolated_db.session() as session:
        first = batch_store.list_batches(session, None, limit=25)
        last = (first[-1].created_at, first[-1].id)
        second = batch_store.list_batches(session, None, limit=25, before=last)
    newest = [(b.created_at, b.id) for b in first + second]
    assert newest == sorted(newest, reverse=True) and len(set(newest)) == 50
    assert second[0].created_at < first[-1].created_at

    before = (datetime.now(UTC), first[-1].id)
    for owner in (None, owners[0]):
        nodes = _plan(isolated_db, batch_store.batches_query(owner, limit=25, before=before))
        assert not [n for n in nodes if n["Node Type"] == "Sort"], nodes
        scans = {n.get("Index Name") for n in nodes if "Index" in n["Node Type"]}
        assert scans == {"ix_batches_created_id" if owner is None else "ix_batches_owner_created"}, nodes
