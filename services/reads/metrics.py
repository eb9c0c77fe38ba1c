"""What /metrics shows, read from the counters PostgreSQL keeps per transition: plain figures."""

from __future__ import annotations

from store import metrics
from store.db import Database
from store.metrics import RUN_SECONDS_BUCKETS, Figures

__all__ = ["RUN_SECONDS_BUCKETS", "Figures", "figures"]


def figures(db: Database) -> Figures:
    """Jobs by kind and state, shards by state, rows written and the run-time histogram."""
    with db.session() as session:
        return metrics.figures(session)
