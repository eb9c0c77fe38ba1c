"""Persistence: SQLAlchemy models, the database handle, job state transitions and API keys."""
