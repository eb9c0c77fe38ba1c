"""The thin Celery layer: wake-up messages carry job ids; PostgreSQL holds the truth."""
