"""Issue 37, item 10: hostile input on the dashboard is a 4xx, never a 500 (as on the API)."""

from __future__ import annotations

import uuid

import pytest

from store import jobs as job_store
from store import keys
from tests.security.helpers import bearer_token, csrf_token, signed_in
from tests.support import sent_ahead

HUGE = "9" * 5000  # past Python's 4,300-digit int() limit


def _sheet(db, headers: dict[str, str]) -> str:
    """A stored Planet X note sheet (a queued deduce job) of the key; no worker needed."""
    with db.session() as session:
        owner = keys.authenticate(session, bearer_token(headers)).id
        params = {"mode": "standard", "sky_start": 1, "observations": []}
        job, _ = job_store.create_job(
            session, owner_id=owner, kind="planetx.deduce", params=params, time_limit=30
        )
        sent_ahead(session, job.id)  # it stays queued, whatever worker this process runs
        return str(job.id)


@pytest.mark.parametrize(
    "target",
    [
        "/admin%0d%0aSet-Cookie:%20zolve_admin=stolen",
        "/admin/jobs%0aLocation:%20https://evil.example",
        "/admin/jobs\\evil",
        "/admin%00",
    ],
    ids=["crlf", "lf", "backslash", "nul"],
)
def test_a_login_with_a_hostile_next_goes_to_the_dashboard(app, make_key, target: str) -> None:
    client = app.test_client()
    data = {"key": bearer_token(make_key()), "csrf_token": csrf_token(client)}
    response = client.post(f"/admin/login?next={target}", data=data)
    assert response.status_code == 302, response.status_code
    assert response.headers["Location"] == "/admin/"
    assert "stolen" not in response.headers.get("Set-Cookie", "")
    assert client.get(f"/admin/login?next={target}").status_code == 200


@pytest.mark.parametrize(
    "form",
    [
        {"entry": "survey", "object": "asteroid", "first": HUGE, "last": "3", "count": "1"},
        {"entry": "target", "sector": HUGE, "seen": "empty"},
        {"entry": "settings", "sky_start": HUGE, "targets_used": "-" + HUGE},
        {"entry": "remove", "index": HUGE},
        {"entry": "theory", "forget": HUGE},
        {"entry": "topics", "topic_A_subject": HUGE, "topic_F_other": "\x00"},
    ],
    ids=["survey", "target", "settings", "remove", "forget", "topics"],
)
def test_huge_numbers_on_the_note_sheet_are_refused(app, db, make_key, form: dict[str, str]) -> None:
    headers = make_key()
    client = signed_in(app, headers)
    sheet = _sheet(db, headers)
    path = f"/admin/planetx/notes/{sheet}"
    response = client.post(path, data={**form, "csrf_token": csrf_token(client, path)})
    assert response.status_code in (302, 400, 422), response.status_code


def test_a_huge_number_starting_a_sheet_is_refused(app, make_key) -> None:
    client = signed_in(app, make_key())
    path = "/admin/planetx/notes"
    data = {"mode": "standard", "sky_start": HUGE, "csrf_token": csrf_token(client, path)}
    assert client.post(path, data=data).status_code == 422


@pytest.mark.parametrize("params", ["[" * 5_000, '{"dice": ' + HUGE + "}"], ids=["deep", "huge"])
def test_unreadable_params_on_the_new_job_form_are_refused(app, make_key, params: str) -> None:
    client = signed_in(app, make_key())
    path = "/admin/new/dice"
    data = {"params": params, "time_limit": HUGE, "csrf_token": csrf_token(client, path)}
    refused = client.post(path, data=data)
    text = refused.get_data(as_text=True)
    assert refused.status_code == 422 and "sys." not in text, "Python's own advice is not the operator's"


def test_an_unknown_job_id_on_a_sheet_is_404(app, make_key) -> None:
    client = signed_in(app, make_key())
    assert client.get(f"/admin/planetx/notes/{uuid.uuid4()}").status_code == 404
