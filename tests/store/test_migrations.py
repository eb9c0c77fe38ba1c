from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from store.db import Database
from store.migrate import alembic_config
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


def test_the_attempt_reasons_migration_drops_what_receivers_sent(isolated_db: Database) -> None:
    """0016 turns webhook_attempts.error (the receiver's body, exceptions' text) into a reason of ours."""
    from alembic import command
    from sqlalchemy import text

    from store import keys

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
        owner = keys.create_key(session, name="o").id
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
