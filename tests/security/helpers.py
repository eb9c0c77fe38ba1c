"""What the security probes share: signing in to the dashboard with a key, as a browser does."""

from __future__ import annotations

import re

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(client, path: str = "/admin/login") -> str:
    page = client.get(path)
    assert page.status_code == 200, page.status_code
    return TOKEN.search(page.get_data(as_text=True)).group(1)


def bearer_token(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


def signed_in(app, headers: dict[str, str]):
    """A test client with a dashboard session of the key."""
    client = app.test_client()
    response = client.post(
        "/admin/login", data={"key": bearer_token(headers), "csrf_token": csrf_token(client)}
    )
    assert response.status_code == 302, response.status_code
    return client
