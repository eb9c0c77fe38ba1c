"""Issue 37, item 6: a dashboard session ends for every copy of its cookie: at logout, when its key is
revoked, and after an absolute lifetime however busy it is (besides the idle one)."""

from __future__ import annotations

import pytest

from store import keys
from tests.security.helpers import bearer_token, csrf_token, signed_in
from tests.support import wait_until

COOKIE = "zolve_admin"


def _copy(app, client):
    """A second browser holding a copy of the client's session cookie (a stolen one)."""
    thief = app.test_client()
    thief.set_cookie(COOKIE, client.get_cookie(COOKIE).value)
    return thief


def _opens(client) -> bool:
    return client.get("/admin/jobs").status_code == 200


def test_logout_ends_every_copy_of_the_cookie(app, make_key) -> None:
    owner = make_key()
    browser = signed_in(app, owner)
    thief = _copy(app, browser)
    assert _opens(thief), "a copy works while the session lives"
    assert (
        browser.post("/admin/logout", data={"csrf_token": csrf_token(browser, "/admin/jobs")}).status_code
        == 302
    )
    assert not _opens(thief) and not _opens(browser)
    again = signed_in(app, owner)
    assert _opens(again), "signing in again opens a new session"
    assert not _opens(thief), "the old copy stays ended"


def test_revoking_the_key_ends_every_copy(app, db, make_key) -> None:
    owner = make_key()
    browser = signed_in(app, owner)
    thief = _copy(app, browser)
    with db.session() as session:
        keys.revoke_key(session, keys.authenticate(session, bearer_token(owner)).id)
    assert not _opens(thief) and not _opens(browser)


@pytest.fixture
def short_sessions_app(make_app):
    return make_app(session_max_seconds=2.0)


def test_a_busy_session_still_ends_after_its_absolute_lifetime(short_sessions_app, make_key) -> None:
    browser = signed_in(short_sessions_app, make_key())
    assert _opens(browser)
    # each request renews the idle lifetime; the absolute one ends the session anyway
    wait_until(lambda: not _opens(browser), 15, 0.2, "the session to end")
    response = browser.get("/admin/jobs")
    assert response.status_code == 302 and response.headers["Location"].startswith("/admin/login")
