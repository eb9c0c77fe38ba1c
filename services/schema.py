"""The database as the registered kinds need it: the migrations, then the statistics each kind's rows ask
for (kinds.base.Rows.statistics), made by whoever migrates (`zolve migrate`, `zolve up`)."""

from __future__ import annotations

from kinds import KINDS
from migrations.runner import Upgraded, upgrade
from store import rows
from store.db import Database


def migrate(database_url: str) -> Upgraded:
    """Upgrade the schema to the latest revision and make the statistics the kinds' filters need (those
    of plugins included, once loaded). Returns what the upgrade did."""
    upgraded = upgrade(database_url)
    wanted = {kind.rows.name: kind.rows.statistics for kind in KINDS.values() if kind.rows is not None}
    db = Database(database_url)
    try:
        rows.ensure_statistics(db, wanted)
    finally:
        db.dispose()
    return upgraded
