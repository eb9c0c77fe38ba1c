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
