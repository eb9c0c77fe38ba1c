"""What the security probes share: signing in to the dashboard with a key, as a browser does (the
dashboard tests' own helpers, tests/api/test_admin.py)."""

from __future__ import annotations

from tests.api.test_admin import bearer_token, csrf_token, log_in

__all__ = ["bearer_token", "csrf_token", "key_in", "signed_in"]


def signed_in(app, headers: dict[str, str]):
    """A test client with a dashboard session of the key."""
    client = app.test_client()
    response = log_in(client, headers)
    assert response.status_code == 302, response.status_code
    return client


def key_in(db, admin: bool = False) -> dict[str, str]:
    """Authorization headers for a new key in `db` (a database of the test's own, e.g. isolated_db)."""
    from store import keys

    with db.session() as session:
        return {"Authorization": f"Bearer {keys.create_key(session, name='security', is_admin=admin).key}"}
