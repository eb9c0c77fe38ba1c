"""The database handle's connections."""

from __future__ import annotations

from core.config import Settings
from store.db import Database


def test_connections_carry_tcp_liveness_so_a_partition_fails_them_in_seconds(settings: Settings) -> None:
    db = Database(settings.database_url)
    try:
        with db.engine.connect() as connection:
            params = connection.connection.dbapi_connection.info.get_parameters()
    finally:
        db.dispose()
    assert params["keepalives"] == "1" and params["keepalives_idle"] == "10"
    assert params["tcp_user_timeout"] == "20000"
