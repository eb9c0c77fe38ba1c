"""Alembic revisions (a package so that the wheel ships them like any other module)."""
