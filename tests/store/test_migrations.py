from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from migrations.runner import alembic_config
from store.db import Database
from store.models import Base


def test_migrations_have_a_single_head(settings) -> None:
    script = ScriptDirectory.from_config(alembic_config(settings.database_url))
    assert len(script.get_heads()) == 1


def test_models_and_migrations_agree(isolated_db: Database) -> None:
    """The isolated database was built by the migrations alone; the models must describe it exactly."""
    with isolated_db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_the_scale_migration_goes_down_and_up_again(isolated_db: Database) -> None:
    """0009 (counters, their triggers, list indexes) can be undone; done again, the counters start from
    the rows already there."""
    from alembic import command
    from sqlalchemy import text

    from store import keys, tallies

    config = alembic_config(isolated_db.url)
    with isolated_db.session() as session:
        owner = keys.create_key(session, name="o").id
        session.execute(
            text(
                "INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state) "
                "VALUES (gen_random_uuid(), :o, 'dice', '{}', 'h', 60, 'failed')"
            ),
            {"o": owner},
        )
    command.downgrade(config, "0008")
    command.upgrade(config, "head")
    with isolated_db.session() as session:
        assert [(c.kind, c.state, c.jobs) for c in tallies.job_counts(session)] == [("dice", "failed", 1)]
    with isolated_db.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []


def _old_schema_key(session: Any) -> int:
    """A key's row in an older schema than the models' (whose INSERT names today's columns)."""
    from sqlalchemy import text

    insert = "INSERT INTO api_keys (name, prefix, key_hash) VALUES ('o', 'p', md5(random()::text))"
    return int(session.scalar(text(insert + " RETURNING id")))


def test_the_attempt_reasons_migration_drops_what_receivers_sent(isolated_db: Database) -> None:
    """0016 turns webhook_attempts.error (the receiver's body, exceptions' text) into a reason of ours."""
    from alembic import command
    from sqlalchemy import text

    config = alembic_config(isolated_db.url)
    command.downgrade(config, "0015")
    errors = [
        (500, "HTTP 500: <html>secret</html>"),
        (200, None),
        (None, "ReadTimeoutError: HTTPConnectionPool(host='10.0.0.5', port=6379): Read timed out."),
        (
            None,
            "NewConnectionError: <conn>: Failed to establish a new connection: [Errno 111] "
            "Connection refused",
        ),
        (None, "ProtocolError: ('Connection aborted.', RemoteDisconnected('secret banner'))"),
        (None, "refused: resolves to 10.0.0.5, a private, loopback or link-local address"),
        (None, "refused: the host 'x.invalid' does not resolve"),
    ]
    with isolated_db.session() as session:
        owner = _old_schema_key(session)
        job = session.scalar(
            text(
                "INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state) "
                "VALUES (gen_random_uuid(), :o, 'dice', '{}', 'h', 60, 'failed') RETURNING id"
            ),
            {"o": owner},
        )
        delivery = session.scalar(
            text(
                "INSERT INTO webhook_deliveries (owner_id, job_id, url) "
                "VALUES (:o, :j, 'http://x/') RETURNING id"
            ),
            {"o": owner, "j": job},
        )
        for attempt, (status, error) in enumerate(errors, 1):
            session.execute(
                text(
                    "INSERT INTO webhook_attempts (delivery_id, attempt, status_code, error) "
                    "VALUES (:d, :a, :s, :e)"
                ),
                {"d": delivery, "a": attempt, "s": status, "e": error},
            )
    command.upgrade(config, "head")
    with isolated_db.session() as session:
        reasons = session.scalars(text("SELECT reason FROM webhook_attempts ORDER BY attempt")).all()
    assert reasons == [
        "HTTP 500",
        None,
        "timeout",
        "connection refused",
        "connection failed",
        "address not allowed",
        "host does not resolve",
    ]


def test_the_blocks_migration_moves_key_only_rows_into_blocks_and_back(isolated_db: Database) -> None:
    """0021 moves a Planet X enumeration's rows (keys alone) into blocks of at most 16,384 sorted keys;
    rows with payloads stay; its downgrade unpacks the blocks into rows again."""
    from alembic import command
    from sqlalchemy import text

    from store import rows

    config = alembic_config(isolated_db.url)
    command.downgrade(config, "0020")
    insert_job = text(
        "INSERT INTO jobs (id, owner_id, kind, params, params_hash, time_limit, state) "
        "VALUES (gen_random_uuid(), :o, :kind, '{}', gen_random_uuid()::text, 60, 'succeeded') RETURNING id"
    )
    codes = [(n * 7919) % 40_000 - 5 for n in range(40_000)]  # a permutation, negatives included
    with isolated_db.session() as session:
        owner = _old_schema_key(session)
        boards = session.scalar(insert_job, {"o": owner, "kind": "planetx.enumerate"})
        solutions = session.scalar(insert_job, {"o": owner, "kind": "taiji"})
        session.execute(
            text("INSERT INTO rows (job_id, key) SELECT :j, k FROM unnest(CAST(:codes AS bigint[])) AS k"),
            {"j": boards, "codes": codes},
        )
        session.execute(text("INSERT INTO rows (job_id, key, payload) VALUES (:j, 1, 'p')"), {"j": solutions})
    command.upgrade(config, "head")
    with isolated_db.session() as session:
        assert sorted(rows.keys_stored(session, boards).tolist()) == sorted(codes)
        counts = session.scalars(
            text("SELECT count FROM row_blocks WHERE job_id = :j ORDER BY first_key"), {"j": boards}
        ).all()
        left = session.execute(
            text("SELECT job_id, key FROM rows WHERE job_id IN (:b, :s)"), {"b": boards, "s": solutions}
        )
        assert left.all() == [(solutions, 1)]
    assert counts == [16_384, 16_384, 40_000 - 2 * 16_384]
    assert [k for chunk in rows.key_chunks(isolated_db, boards, []) for k in chunk.tolist()] == sorted(codes)
    command.downgrade(config, "0020")
    with isolated_db.session() as session:
        back = session.scalars(
            text("SELECT key FROM rows WHERE job_id = :j ORDER BY key"), {"j": boards}
        ).all()
    assert back == sorted(codes)
    command.upgrade(config, "head")
