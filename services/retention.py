"""Retention: what expired goes, on the workers' timer or on `zolve purge`. The kinds say what to keep."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from kinds import KINDS
from store import retention
from store.db import Database
from store.retention import PurgeReport


def pinned_jobs(db: Database) -> set[uuid.UUID]:
    """Jobs every kind wants kept whatever their age (e.g. the enumeration deduce reads)."""
    return set().union(*(kind.pinned_jobs(db) for kind in KINDS.values()))


def purge(db: Database, older_than: timedelta, *, dry_run: bool = False) -> PurgeReport:
    """Delete finished jobs (with their results, shards, events, rows and batches) that finished more than
    `older_than` ago; `dry_run` only counts them."""
    return purge_finished_before(db, datetime.now(UTC) - older_than, dry_run=dry_run)


def purge_finished_before(db: Database, before: datetime, *, dry_run: bool = False) -> PurgeReport:
    """As `purge`, for the jobs that finished before the moment `before`."""
    return retention.purge(db, before, pinned_jobs(db), dry_run=dry_run)
