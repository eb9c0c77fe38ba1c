"""The admin dashboard over HTTP (Flask test client, real PostgreSQL, the real worker where jobs run):
login and sessions, admin-only access, CSRF, the jobs table, a job's page, actions and their events."""

from __future__ import annotations

import re
import socket
import uuid

import pytest
from sqlalchemy import select, update

from kinds import KINDS
from store import jobs as job_store
from store import keys, shards
from store.models import ApiKey, Job, JobEvent
from tests.support import HeldJob, sent_ahead, wait_until

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 6}}
SLOW = {"kind": "dice", "params": {"dice": 3, "faces": 20}, "time_limit": 120}
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_token(client, path: str = "/admin/login") -> str:
    page = client.get(path)
    assert page.status_code == 200, page.status_code
    return TOKEN.search(page.get_data(as_text=True)).group(1)


def bearer_token(headers: dict[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


def log_in(client, headers: dict[str, str]):
    return client.post("/admin/login", data={"key": bearer_token(headers), "csrf_token": csrf_token(client)})


@pytest.fixture
def admin(make_key) -> dict[str, str]:
    return make_key(admin=True)


@pytest.fixture
def admin_client(app, admin):
    """A test client with an admin session."""
    client = app.test_client()
    assert log_in(client, admin).status_code == 302
    return client


def key_id(db, headers: dict[str, str]) -> int:
    with db.session() as session:
        return keys.authenticate(session, bearer_token(headers)).id


def events_of(db, job_id: str) -> list[tuple[str, int | None]]:
    """The job's transitions and actions (not its progress events)."""
    with db.session() as session:
        rows = session.execute(
            select(JobEvent.event, JobEvent.actor_key_id)
            .where(JobEvent.job_id == uuid.UUID(job_id), JobEvent.event != "progress")
            .order_by(JobEvent.id)
        )
        return [tuple(row) for row in rows]


def job_state(db, job_id: str) -> str:
    with db.session() as session:
        return session.get(Job, uuid.UUID(job_id)).state


def _containing(text: str, part: str) -> str | None:
    return text if part in text else None


def page_text(client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    return response.get_data(as_text=True)


# -- access ---------------------------------------------------------------------------------------
def test_pages_redirect_to_login_until_logged_in_and_logout_ends_the_session(app, admin) -> None:
    client = app.test_client()
    response = client.get("/admin/jobs?state=failed")
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/admin/login?next=/admin/jobs")

    response = client.post(
        "/admin/login",
        data={
            "key": bearer_token(admin),
            "csrf_token": csrf_token(client),
            "next": "/admin/jobs?state=failed",
        },
    )
    assert (response.status_code, response.headers["Location"]) == (302, "/admin/jobs?state=failed")
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and bearer_token(admin) not in cookie
    overview = page_text(client, "/admin/")
    assert "Jobs by state" in overview and "Workers alive" in overview and "Failure rate" in overview

    token = csrf_token(client, "/admin/")
    assert client.post("/admin/logout", data={"csrf_token": token}).status_code == 302
    assert client.get("/admin/").status_code == 302


def test_htmx_requests_without_a_session_are_sent_to_the_login_page(client) -> None:
    response = client.get(f"/admin/jobs/{uuid.uuid4()}/progress", headers={"HX-Request": "true"})
    assert response.headers["HX-Redirect"].startswith("/admin/login")


def test_login_goes_only_to_dashboard_pages(app, admin) -> None:
    client = app.test_client()
    for elsewhere in (
        "https://evil.example/",
        "/admin/../jobs",
        "/admin/./../metrics?x=1",
        "/admin/%2e%2e/jobs",
        "/admin/.%2E/metrics",
        "/admin/..#",
    ):
        data = {"key": bearer_token(admin), "csrf_token": csrf_token(client), "next": elsewhere}
        assert client.post("/admin/login", data=data).headers["Location"] == "/admin/", elsewhere


def test_a_wrong_key_is_401_and_a_client_key_logs_in_to_its_jobs(app, make_key) -> None:
    client = app.test_client()
    wrong = client.post("/admin/login", data={"key": "zk_" + "x" * 40, "csrf_token": csrf_token(client)})
    assert wrong.status_code == 401 and "not a valid API key" in wrong.get_data(as_text=True)
    assert client.get("/admin/").status_code == 302, "a refused login opens no session"
    assert log_in(client, make_key()).status_code == 302
    landing = client.get("/admin/")
    assert (landing.status_code, landing.headers["Location"]) == (302, "/admin/jobs"), "no overview: its jobs"
    assert "Jobs" in page_text(client, "/admin/jobs")


def test_operator_routes_are_admin_only_and_a_client_sees_only_its_own_jobs(
    app, client, make_key, admin
) -> None:
    """Walks the URL map: with a client key (Bearer header or login), the operators' routes are 403 and
    another client's job is 404 on every job route; no key at all is sent to the login page; a bad key
    is 401; an admin's Bearer header works like a session."""
    client_key, other = make_key(), make_key()
    job_id = client.post("/jobs", json=DICE, headers=other).get_json()["id"]
    rules = [
        r
        for r in app.url_map.iter_rules()
        if r.rule.startswith("/admin") and r.endpoint not in ("admin.login", "admin.static")
    ]
    assert len(rules) >= 10
    for rule in rules:
        path = (
            rule.rule.replace("<uuid:job_id>", job_id)
            .replace("<uuid:batch_id>", str(uuid.uuid4()))
            .replace(f"<int(max={2**63 - 1}):shard_id>", "1")
            .replace(f"<int(max={2**63 - 1}):key_id>", "1")
            .replace("<any(csv, ndjson):fmt>", "csv")
            .replace("<kind_name>", "dice")
        )
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            status = client.open(path, method=method, headers=client_key).status_code
            if rule.endpoint == "admin.overview":  # a client's landing page: its jobs, as after a login
                assert status == 302, (method, path)
            elif rule.endpoint in (
                "admin.overview_panel",
                "admin.retry_job",
                "admin.requeue_shard",
                "admin.key_shares",
                "admin.set_key_share",
            ):
                assert status == 403, (method, path)
            elif "<uuid:" in rule.rule:
                assert status == 404, (method, path, status)
            assert client.open(path, method=method).status_code == 302, (method, path)
            bad = {"Authorization": "Bearer zk_" + "n" * 40}
            assert client.open(path, method=method, headers=bad).status_code == 401, (method, path)
    assert client.get(f"/admin/jobs/{job_id}", headers=other).status_code == 200
    assert client.get(f"/admin/jobs/{job_id}", headers=admin).status_code == 200


def test_a_revoked_key_ends_its_session(db, admin_client, admin) -> None:
    assert admin_client.get("/admin/").status_code == 200
    with db.session() as session:
        session.execute(
            update(ApiKey).where(ApiKey.id == key_id(db, admin)).values(revoked_at=ApiKey.created_at)
        )
    assert admin_client.get("/admin/").status_code == 302


def test_a_url_under_admin_that_matches_no_page_gets_the_dashboards_error_page(admin_client, client) -> None:
    for method, path, code in (
        ("GET", "/admin/nosuch", 404),
        ("GET", "/admin/jobs/not-a-uuid", 404),
        ("GET", "/admin/logout", 405),
        ("POST", "/admin/jobs", 405),
    ):
        answer = admin_client.open(path, method=method)
        assert answer.status_code == code and "text/html" in answer.content_type, (method, path)
        assert "<html" in answer.get_data(as_text=True).lower()
    api = client.get("/nosuch")
    assert api.status_code == 404 and api.get_json()["code"] == 404, "the API still answers in JSON"


def test_forms_without_the_csrf_token_are_rejected(app, db, admin_client, admin, make_key) -> None:
    anonymous = app.test_client()
    response = anonymous.post("/admin/login", data={"key": bearer_token(admin)})
    assert response.status_code == 400 and "CSRF" in response.get_data(as_text=True)

    job_id = _stored_job(db, make_key(), state="queued")
    assert admin_client.post(f"/admin/jobs/{job_id}/cancel").status_code == 400
    assert admin_client.post(f"/admin/jobs/{job_id}/cancel", data={"csrf_token": "forged"}).status_code == 400
    assert admin_client.post("/admin/logout").status_code == 400
    assert job_state(db, job_id) == "queued"
    assert admin_client.get("/admin/").status_code == 200, "still logged in"


def test_the_keys_page_shows_each_keys_share_and_work_and_changes_the_share(
    db, admin_client, make_key
) -> None:
    team = make_key()
    team_id = key_id(db, team)
    running = _stored_job(db, team, state="running")
    page = page_text(admin_client, "/admin/keys")
    row = re.search(rf'<tr data-key="{team_id}">.*?</tr>', page, re.S).group(0)
    assert re.findall(r'<td class="num">(\d+)</td>', row) == [str(team_id), "0", "1"], row
    token = TOKEN.search(page).group(1)
    saved = admin_client.post(
        f"/admin/keys/{team_id}", data={"csrf_token": token, "weight": "3", "max_in_flight": "5"}
    )
    assert saved.status_code == 302
    with db.session() as session:
        row_after = session.get(ApiKey, team_id)
        assert (row_after.weight, row_after.max_in_flight) == (3.0, 5)
    assert f"key {team_id} (test): weight 3, max in flight 5" in page_text(admin_client, "/admin/keys")
    for form, message in (
        ({"weight": "0", "max_in_flight": ""}, "weight: must be from 0.01 to 100"),
        ({"weight": "nan", "max_in_flight": ""}, "weight: must be a finite number"),
        ({"weight": "two", "max_in_flight": ""}, "weight: not a number: &#34;two&#34;"),
        ({"weight": "2\x00", "max_in_flight": ""}, "weight: not a number: &#34;2?&#34;"),
        ({"weight": "", "max_in_flight": ""}, "weight: a number is needed"),
        ({"weight": "1", "max_in_flight": "1.5"}, "max_in_flight: must be a whole number"),
        ({"weight": "1", "max_in_flight": "0"}, "max_in_flight: must be from 1 to 1,000,000"),
        ({"weight": "1", "max_in_flight": "2147483648"}, "max_in_flight: must be from 1 to 1,000,000"),
        ({"weight": "1", "max_in_flight": "1e30"}, "max_in_flight: must be from 1 to 1,000,000"),
    ):
        refused = admin_client.post(f"/admin/keys/{team_id}", data={"csrf_token": token, **form})
        assert refused.status_code == 302
        assert message in page_text(admin_client, "/admin/keys"), form
    cleared = admin_client.post(f"/admin/keys/{team_id}", data={"csrf_token": token, "weight": "1"})
    assert cleared.status_code == 302
    with db.session() as session:
        row_after = session.get(ApiKey, team_id)
        assert (row_after.weight, row_after.max_in_flight) == (1.0, None)
    huge = admin_client.post(f"/admin/keys/{2**63}", data={"csrf_token": token, "weight": "1"})
    assert huge.status_code == 404 and "text/html" in huge.content_type, "the dashboard's page, not JSON"
    missing = admin_client.post("/admin/keys/987654321", data={"csrf_token": token, "weight": "1"})
    assert missing.status_code == 302
    assert "there is no key 987654321" in page_text(admin_client, "/admin/keys")
    with db.session() as session:  # ended, so that the module's cleanup has nothing to wait for
        session.execute(update(Job).where(Job.id == uuid.UUID(running)).values(state="failed"))


def test_the_bearer_api_needs_no_csrf_token(client, auth) -> None:
    response = client.post("/jobs", json=DICE, headers=auth)
    assert response.status_code == 202
    assert client.post(f"/jobs/{response.get_json()['id']}/cancel", headers=auth).status_code in (202, 409)


def test_the_dashboard_is_not_in_the_openapi_spec(client) -> None:
    spec = client.get("/openapi.json").get_json()
    assert not [path for path in spec["paths"] if path.startswith("/admin")]


# -- jobs table -----------------------------------------------------------------------------------
def _stored_job(db, owner: dict[str, str], *, state: str, kind: str = "dice") -> str:
    """A job row in the given state that no worker takes up while the test runs: a final one is left
    alone, a queued one is marked sent ahead (tests.support.sent_ahead), a running one is claimed by a
    holder of no worker's name (as HeldJob's: running with no lease at all would be a sharded job planned
    and awaiting its finalize, which the sweep finalizes)."""
    with db.session() as session:
        owner_id = keys.authenticate(session, bearer_token(owner)).id
        job, _ = job_store.create_job(
            session, owner_id=owner_id, kind=kind, params={"dice": 3, "faces": 6}, time_limit=60
        )
        if state == "queued":
            sent_ahead(session, job.id)
        elif state == "running":
            job_store.claim(session, job.id, HeldJob.holder, lease_seconds=3600)
        else:
            session.execute(
                update(Job).where(Job.id == job.id).values(state=state, finished_at=Job.created_at)
            )
        return str(job.id)


def _listed(client, query: str) -> list[str]:
    return re.findall(r'<tr data-job="([0-9a-f-]{36})"', page_text(client, f"/admin/jobs?{query}"))


def test_jobs_table_filters_by_state_kind_owner_and_id(db, admin_client, make_key) -> None:
    owner, other = make_key(), make_key()
    states = ["succeeded", "succeeded", "failed", "cancelled"]
    mine = [_stored_job(db, owner, state=s) for s in states]
    mine.append(_stored_job(db, owner, state="failed", kind="taiji.solve"))
    theirs = _stored_job(db, other, state="failed")
    owner_id = key_id(db, owner)

    newest_first = list(reversed(mine))
    assert _listed(admin_client, f"owner={owner_id}") == newest_first
    assert _listed(admin_client, f"owner={owner_id}&state=failed") == [mine[4], mine[2]]
    assert _listed(admin_client, f"owner={owner_id}&state=failed&state=cancelled") == [
        mine[4],
        mine[3],
        mine[2],
    ]
    assert _listed(admin_client, f"owner={owner_id}&kind=taiji.solve") == [mine[4]]
    assert _listed(admin_client, f"owner={owner_id}&kind=taiji.solve&kind=dice&state=failed") == [
        mine[4],
        mine[2],
    ]
    assert 'value="taiji.solve" selected' in page_text(
        admin_client, f"/admin/jobs?owner={owner_id}&kind=taiji.solve"
    )
    assert _listed(admin_client, f"q={mine[1]}") == [mine[1]]
    assert mine[1] in _listed(admin_client, f"q={mine[1][:8]}&owner={owner_id}")
    assert _listed(admin_client, f"state=failed&q={theirs}") == [theirs], "no owner filter: every owner's"
    assert theirs not in _listed(admin_client, f"owner={owner_id}&limit=200")
    assert "no job matches" in page_text(admin_client, "/admin/jobs?q=not-hex!")
    for query, said in (
        ("owner=bob", "owner: a key&#39;s number"),
        ("owner=%D9%A3", "owner: a key&#39;s number"),
        ("kind=nosuch", "kind: no kind is named nosuch"),
        ("kind=dice&kind=nosuch", "kind: no kind is named nosuch"),
        ("state=bogus", "state: bogus is none of"),
    ):
        assert said in page_text(admin_client, f"/admin/jobs?{query}"), query


def test_jobs_table_pages_with_a_keyset_cursor(db, admin_client, make_key) -> None:
    owner = make_key()
    ids = [_stored_job(db, owner, state="succeeded") for _ in range(7)]
    seen, url = [], f"/admin/jobs?owner={key_id(db, owner)}&limit=3"
    while url:
        html = page_text(admin_client, url)
        seen.append(re.findall(r'<tr data-job="([0-9a-f-]{36})"', html))
        found = re.search(r'<a rel="next" href="([^"]+)"', html)
        url = found.group(1).replace("&amp;", "&") if found else None
    assert [len(page) for page in seen] == [3, 3, 1]
    assert sum(seen, []) == list(reversed(ids))
    assert "no job matches" in page_text(admin_client, "/admin/jobs?cursor=bm9wZQ")


@pytest.mark.parametrize("query", ["owner=²", "limit=²", "owner=٣", "limit=٣", "owner=%00", "limit=1_0"])
def test_a_non_ascii_number_in_the_jobs_table_query_is_ignored(admin_client, query: str) -> None:
    # '²'.isdigit() holds and int('²') raises: once a 500; '٣' was read as 3
    response = admin_client.get(f"/admin/jobs?{query}")
    assert response.status_code == 200, response.status_code


def test_progress_fragment_polls_until_the_job_is_final(db, admin_client, make_key) -> None:
    owner = make_key()
    done = _stored_job(db, owner, state="succeeded")
    fragment = page_text(admin_client, f"/admin/jobs/{done}/progress")
    assert "hx-trigger" not in fragment and 'value="100"' in fragment and "succeeded" in fragment
    from_its_page = {"HX-Request": "true", "HX-Current-URL": f"http://localhost/admin/jobs/{done}"}
    response = admin_client.get(f"/admin/jobs/{done}/progress", headers=from_its_page)
    assert response.headers["HX-Refresh"] == "true", "its page reloads to show the outcome"
    from_the_list = {"HX-Request": "true", "HX-Current-URL": "http://localhost/admin/jobs"}
    assert "HX-Refresh" not in admin_client.get(f"/admin/jobs/{done}/progress", headers=from_the_list).headers

    waiting = _stored_job(db, owner, state="queued")
    fragment = page_text(admin_client, f"/admin/jobs/{waiting}/progress")
    assert 'hx-trigger="every 1s"' in fragment and "queued" in fragment
    assert f'hx-get="/admin/jobs/{waiting}/progress"' in fragment
    assert "<progress" in fragment, "an unmeasured job that waits or runs: an indeterminate bar"
    with db.session() as session:  # cancel it ourselves: no worker should pick it up later
        job_store.request_cancel(session, session.get(Job, uuid.UUID(waiting)))
    cancelled = page_text(admin_client, f"/admin/jobs/{waiting}/progress")
    assert "hx-trigger" not in cancelled and "<progress" not in cancelled, "finished: no bar still moving"


# -- a job's page ---------------------------------------------------------------------------------
def test_job_page_shows_params_history_and_the_dice(admin_client, client, auth, worker, wait_job) -> None:
    job = wait_job(auth, client.post("/jobs", json=DICE, headers=auth).get_json()["id"])
    assert job["state"] == "succeeded"
    html = page_text(admin_client, f"/admin/jobs/{job['id']}")
    assert "&#34;faces&#34;: 6" in html or '"faces": 6' in html
    history = re.findall(r'<tr class="event-([a-z_]+)">', html)
    assert history == ["created", "running", "succeeded"]
    assert "<caption>Dice</caption>" in html
    for die in job["result"]["dice"]:
        assert "".join(f"<td>{face}</td>" for face in die) in html
    assert "hx-trigger" not in html.split('id="job-status"')[1].split("</div>")[0], "final: no polling"


def test_job_page_shows_a_leaving_earth_plan_as_a_table(admin_client, client, auth, worker, wait_job) -> None:
    body = {
        "kind": "leaving_earth.plan",
        "params": {"origin": "E", "destination": "L", "launch": "two-stage"},
    }
    job = wait_job(auth, client.post("/jobs", json=body, headers=auth).get_json()["id"])
    assert job["state"] == "succeeded" and job["result"]["cost"] == 21
    html = page_text(admin_client, f"/admin/jobs/{job['id']}")
    for stage in job["result"]["plan"]:
        assert f"<td>{stage['origin']}</td>" in html and f"<td>{stage['destination']}</td>" in html
    assert "soyuz" in html and "juno" in html


def test_job_page_shows_the_error_with_its_traceback(db, admin_client, make_key) -> None:
    job_id = _stored_job(db, make_key(), state="failed")
    error = {
        "type": "ValueError",
        "message": "bad faces",
        "traceback": "Traceback (most recent call last):\n  boom",
    }
    with db.session() as session:
        session.execute(update(Job).where(Job.id == uuid.UUID(job_id)).values(error=error))
    html = page_text(admin_client, f"/admin/jobs/{job_id}")
    assert "bad faces" in html and "Traceback (most recent call last):" in html
    assert 'id="retry"' in html and 'id="cancel"' not in html


def test_unknown_job_page_is_a_404_page(admin_client) -> None:
    response = admin_client.get(f"/admin/jobs/{uuid.uuid4()}")
    assert response.status_code == 404 and "no such job" in response.get_data(as_text=True)


# -- actions --------------------------------------------------------------------------------------
def test_cancel_asks_first_then_cancels_and_records_who(
    db, admin_client, admin, client, auth, worker
) -> None:
    job_id = client.post("/jobs", json=SLOW, headers=auth).get_json()["id"]
    wait_until(lambda: job_state(db, job_id) == "running", 30, what="the job to start")
    confirm = page_text(admin_client, f"/admin/jobs/{job_id}/cancel")
    assert "Cancel dice job" in confirm and job_state(db, job_id) == "running", "a GET only asks"
    token = TOKEN.search(confirm).group(1)
    response = admin_client.post(f"/admin/jobs/{job_id}/cancel", data={"csrf_token": token})
    assert response.status_code == 302 and response.headers["Location"] == f"/admin/jobs/{job_id}"
    assert "cancel requested" in page_text(admin_client, f"/admin/jobs/{job_id}")
    wait_until(lambda: job_state(db, job_id) == "cancelled", 15, what="the cancel")
    assert ("cancel_requested", key_id(db, admin)) in events_of(db, job_id)
    assert [e for e, _ in events_of(db, job_id)] == ["created", "running", "cancel_requested", "cancelled"]
    assert client.get(f"/jobs/{job_id}?wait=5", headers=auth).get_json()["state"] == "cancelled"


def test_a_client_cancel_is_recorded_with_its_key(db, client, auth) -> None:
    job_id = _stored_job(db, auth, state="queued")
    assert client.post(f"/jobs/{job_id}/cancel", headers=auth).get_json()["state"] == "cancelled"
    assert events_of(db, job_id) == [("created", key_id(db, auth)), ("cancelled", key_id(db, auth))]
    again = client.post(f"/jobs/{job_id}/cancel", headers=auth)  # cancelled is final, as the README says
    assert again.status_code == 409 and "already finished (cancelled)" in again.get_json()["message"]
    assert events_of(db, job_id) == [("created", key_id(db, auth)), ("cancelled", key_id(db, auth))]


def test_a_clients_page_names_no_other_key_in_its_jobs_history(db, app, admin_client, client, admin) -> None:
    """An operator's cancel shows on the client's page as an operator's, not as the admin key's name
    and the start of its secret (before, in the security audit: `admin (zolve up) (zk_OfRNdKr)`)."""
    owner = {"Authorization": f"Bearer {keys_made(db)}"}
    job_id = _stored_job(db, owner, state="queued")
    assert client.post(f"/jobs/{job_id}/cancel", headers=admin).get_json()["state"] == "cancelled"
    with db.session() as session:
        operator = session.scalar(select(ApiKey).where(ApiKey.id == key_id(db, admin)))
        admin_label = f"{operator.name} ({operator.prefix})"
    browser = app.test_client()
    log_in(browser, owner)
    seen = page_text(browser, f"/admin/jobs/{job_id}")
    assert operator.prefix not in seen and "an operator" in seen, seen
    assert admin_label in page_text(admin_client, f"/admin/jobs/{job_id}"), "an admin reads every name"


def keys_made(db) -> str:
    """A new client key's secret, named after what a client might call itself."""
    with db.session() as session:
        return keys.create_key(session, name="acme-prod").key


def test_the_cancel_page_of_a_finished_job_says_so_and_offers_no_cancel(db, admin_client, auth) -> None:
    for state in ("cancelled", "succeeded"):
        job_id = _stored_job(db, auth, state=state)
        response = admin_client.get(f"/admin/jobs/{job_id}/cancel")
        text = response.get_data(as_text=True)
        assert response.status_code == 409 and f"already finished ({state})" in text
        assert "Yes, cancel job" not in text and 'method="post"' not in text.split("<main")[-1]


def test_retry_runs_a_failed_job_again(db, admin_client, admin, client, auth, worker, wait_job) -> None:
    job_id = _stored_job(db, auth, state="failed")
    assert client.get(f"/jobs/{job_id}", headers=auth).get_json()["state"] == "failed"
    token = TOKEN.search(page_text(admin_client, f"/admin/jobs/{job_id}/retry")).group(1)
    assert admin_client.post(f"/admin/jobs/{job_id}/retry", data={"csrf_token": token}).status_code == 302
    final = wait_job(auth, job_id)
    assert final["state"] == "succeeded" and final["attempts"] == 1 and final["result"]["wins"] == 21
    assert [e for e, _ in events_of(db, job_id)] == ["created", "retried", "running", "succeeded"]
    assert ("retried", key_id(db, admin)) in events_of(db, job_id)
    again = admin_client.post(
        f"/admin/jobs/{job_id}/retry", data={"csrf_token": token}, follow_redirects=True
    )
    assert "only a failed job can be retried" in again.get_data(as_text=True)
    asked = admin_client.get(f"/admin/jobs/{job_id}/retry")
    refused = asked.get_data(as_text=True)
    assert asked.status_code == 409 and "this one is succeeded" in refused and "Yes, retry" not in refused


def test_overview_counts_jobs_and_shows_live_workers(db, admin_client, worker, client, auth) -> None:
    job_id = client.post("/jobs", json=SLOW, headers=auth).get_json()["id"]
    try:
        wait_until(lambda: job_state(db, job_id) == "running", 30, what="the job to start")
        html = wait_until(
            lambda: _containing(page_text(admin_client, "/admin/panel"), job_id[:8]),
            15,
            what="the worker running the job to be listed",
        )
        workers = html.split('id="workers"')[1]
        assert worker.log_path.exists() and f"dice {job_id[:8]}" in workers
        running = int(
            re.search(r"state-running\">running</span></a></td>\s*<td class=\"num\">([\d,]+)", html)[1]
        )
        assert running >= 1
        assert 'hx-trigger="every 5s"' in html and "<svg" in html
    finally:
        client.post(f"/jobs/{job_id}/cancel", headers=auth)


def test_requeue_takes_a_stuck_shard_back_and_the_worker_finishes_it(db, admin_client, admin, worker) -> None:
    # constrained to the one shard planned below: a plain {"mode": "standard"} job finished with one shard's
    # boards would be taken for the complete enumeration that deduce and simulate read (and was, by the
    # note sheet's test, when it ran after this one)
    asteroids = [{"sector": sector, "object": "asteroid"} for sector in (1, 2)]
    params = KINDS["planetx.enumerate"].load_params({"mode": "standard", "constraints": asteroids})
    with db.session() as session:
        owner = keys.create_key(session, name="shards").id
        job, _ = job_store.create_job(
            session, owner_id=owner, kind="planetx.enumerate", params=params, time_limit=60
        )
        sent_ahead(session, job.id)  # the planner below claims it, not the live worker
    with db.session() as session:  # planned by hand, its one shard held by a worker that hangs
        assert job_store.claim(session, job.id, "planner", 30) is not None
        [shard_id] = shards.create_shards(session, job.id, "planner", ["AA"])
        shards.claim_shard(session, shard_id, "hung:1", 30)
    html = page_text(admin_client, f"/admin/jobs/{job.id}")
    requeue = f"/admin/jobs/{job.id}/shards/{shard_id}/requeue"
    assert requeue in html and "hung:1" in html
    token = TOKEN.search(page_text(admin_client, requeue)).group(1)
    assert admin_client.post(requeue, data={"csrf_token": token}).status_code == 302
    wait_until(lambda: job_state(db, str(job.id)) == "succeeded", 60, what="the requeued shard to finish")
    with db.session() as session:
        done = session.get(Job, job.id)
        assert done.rows_done == done.result["count"] > 0
    assert ("shard_requeued", key_id(db, admin)) in events_of(db, str(job.id))
    export = admin_client.get(f"/admin/jobs/{job.id}/export.csv").get_data(as_text=True).splitlines()
    assert export[0] == "code,board" and len(export) == done.rows_done + 1
    assert all(line.split(",")[1].startswith("AA") for line in export[1:])
    again = admin_client.post(requeue, data={"csrf_token": token}, follow_redirects=True)
    assert "only a queued or running shard of a running job" in again.get_data(as_text=True)


def test_the_favicon_is_an_icon_for_anyone(client) -> None:
    """Every dashboard page made the browser ask for /favicon.ico: a 404 before (issue 50, item 8)."""
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert response.data.startswith(b"<svg") and "max-age" in response.headers["Cache-Control"]


def test_a_database_outage_is_a_page_for_the_browser(make_app, make_key) -> None:
    """The dashboard answered a browser with the API's JSON 503 while PostgreSQL was away (the resilience
    audit): now its own page, with the API's message and Retry-After."""
    up = make_app(secret_key="one-key-for-both")
    browser = up.test_client()
    assert log_in(browser, make_key(admin=True)).status_code == 302
    with socket.create_server(("127.0.0.1", 0)) as bound:
        port = bound.getsockname()[1]  # nothing listens there once closed
    away = make_app(secret_key="one-key-for-both", database_url=f"postgresql://zolve@127.0.0.1:{port}/zolve")
    cookie = browser.get_cookie("zolve_admin")
    assert cookie is not None
    outage = away.test_client()
    outage.set_cookie("zolve_admin", cookie.value)
    answer = outage.get("/admin/jobs", headers={"Accept": "text/html"})
    page = answer.get_data(as_text=True)
    assert answer.status_code == 503 and answer.mimetype == "text/html", page[:300]
    assert "the database is unavailable; retry shortly" in page and answer.headers["Retry-After"] == "2"


def test_a_batch_is_cancelled_from_its_page(app, client, make_key) -> None:
    import tests.plugins  # noqa: F401 - test.hold

    owner, stranger = make_key(), make_key()
    items = [{"client_id": f"b{n}", "params": {"seconds": 60, "release": f"page{n}"}} for n in range(3)]
    batch = client.post("/batches", json={"kind": "test.hold", "items": items}, headers=owner).get_json()
    browser = app.test_client()
    log_in(browser, owner)
    path = f"/admin/batches/{batch['id']}"
    assert 'id="cancel-batch"' in page_text(browser, path)
    asked = page_text(browser, f"{path}/cancel")
    assert "Cancel every job of test.hold batch" in asked and "back to the batch" in asked
    done = browser.post(f"{path}/cancel", data={"csrf_token": TOKEN.search(asked).group(1)})
    assert done.status_code == 302 and done.headers["Location"] == path
    assert "cancel requested for 3 jobs" in page_text(browser, path)
    counts = client.get(f"/batches/{batch['id']}", headers=owner).get_json()["counts"]
    assert set(counts) <= {"cancelled", "cancelling"} and sum(counts.values()) == 3, counts
    other = app.test_client()
    log_in(other, stranger)
    assert other.get(f"{path}/cancel").status_code == 404

    rejected = [{"client_id": "x", "params": {"seconds": 99}}]  # past the kind's 60: rejected, so done
    finished = client.post(
        "/batches", json={"kind": "test.hold", "items": rejected}, headers=owner
    ).get_json()
    done_path = f"/admin/batches/{finished['id']}"
    assert 'id="cancel-batch"' not in page_text(browser, done_path), "nothing to cancel"
    refused = browser.get(f"{done_path}/cancel")
    assert refused.status_code == 409 and "nothing to cancel" in refused.get_data(as_text=True)
