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
