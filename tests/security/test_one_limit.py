"""Issue 37, item 4: the dashboard's submits (the new-job form, the note sheet) and an operator's retry draw
on the same per-key submit budget as `POST /jobs`, and on the same unfinished-jobs quota."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from store import jobs as job_store
from store import keys
from store.models import Job
from tests.security.helpers import bearer_token, csrf_token, key_in, signed_in

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


@pytest.fixture
def limited_app(make_app):
    return make_app(submit_rate_limit="3 per minute")


@pytest.fixture
def quota_app(isolated_db, make_app):
    """A quota of 2 unfinished jobs per key, on a database no worker looks at: its jobs stay unfinished
    however long the test takes (on the session's database the session's worker may finish them)."""
    return make_app(database_url=isolated_db.url, max_unfinished_per_key=2)


def _form_submit(client, kind: str = "dice", params: str = '{"dice": 3, "faces": 4}'):
    path = f"/admin/new/{kind}"
    return client.post(path, data={"params": params, "csrf_token": csrf_token(client, path)})


def test_dashboard_submits_share_the_api_submit_budget(limited_app, make_key) -> None:
    key = make_key()
    api, dashboard = limited_app.test_client(), signed_in(limited_app, key)
    # a form the schema refuses is its 422 and costs nothing
    assert _form_submit(dashboard, params='{"dice": "x"}').status_code == 422
    assert api.post("/jobs", json=DICE, headers=key).status_code == 202
    assert [_form_submit(dashboard).status_code for _ in range(2)] == [302, 302]
    refused = _form_submit(dashboard)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert api.post("/jobs", json=DICE, headers=key).status_code == 429
    # over the budget, a form the schema refuses is still its 422 (as POST /jobs)
    assert _form_submit(dashboard, params='{"dice": "x"}').status_code == 422
    other = make_key()
    assert _form_submit(signed_in(limited_app, other)).status_code == 302, "another key has its own"


def test_the_note_sheet_draws_on_the_same_budget(limited_app, make_key) -> None:
    key = make_key()
    dashboard = signed_in(limited_app, key)
    path = "/admin/planetx/notes"
    statuses = [
        dashboard.post(
            path, data={"mode": "standard", "sky_start": "1", "csrf_token": csrf_token(dashboard, path)}
        ).status_code
        for _ in range(4)
    ]
    assert statuses == [302, 302, 302, 429]


def test_dashboard_submits_hold_the_unfinished_quota(quota_app, isolated_db) -> None:
    key = key_in(isolated_db)
    dashboard = signed_in(quota_app, key)
    assert quota_app.test_client().post("/jobs", json=DICE, headers=key).status_code == 202
    assert _form_submit(dashboard).status_code == 302
    assert _form_submit(dashboard).status_code == 429


def test_a_retry_holds_the_owners_quota(quota_app, isolated_db) -> None:
    owner = key_in(isolated_db)
    with isolated_db.session() as session:
        owner_id = keys.authenticate(session, bearer_token(owner)).id
        made = [
            job_store.create_job(session, owner_id=owner_id, time_limit=10, **DICE)[0].id for _ in range(3)
        ]
        session.execute(update(Job).where(Job.id == made[0]).values(state="failed"))
    operator = signed_in(quota_app, key_in(isolated_db, admin=True))
    path = f"/admin/jobs/{made[0]}/retry"
    operator.post(path, data={"csrf_token": csrf_token(operator, path)})
    with isolated_db.session() as session:
        assert session.get(Job, made[0]).state == "failed", "the owner already has 2 unfinished jobs"
