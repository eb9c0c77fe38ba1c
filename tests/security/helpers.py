"""What the security probes share: signing in to the dashboard with a key, as a browser does (the
dashboard tests' own helpers, tests/api/test_admin.py)."""

from __future__ import annotations

from tests.api.test_admin import bearer_token, csrf_token, log_in

__all__ = ["bearer_token", "csrf_token", "signed_in"]


def signed_in(app, headers: dict[str, str]):
    """A test client with a dashboard session of the key."""
    client = app.test_client()
    response = log_in(client, headers)
    assert response.status_code == 302, response.status_code
    return client
