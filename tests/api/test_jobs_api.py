"""The HTTP contract of /jobs: auth, validation, idempotency, pagination, ETags, long-poll, cancel."""

import gzip
import json
import logging
import math
import threading
import time
import uuid

import pytest

from api.extension import zolve
from tests.support import sent_ahead

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 6}}


def test_submit_answers_202_with_location_and_the_job(client, auth, worker, wait_job) -> None:
    response = client.post("/jobs", json=DICE, headers=auth)
    assert response.status_code == 202
    job = response.get_json()
    assert response.headers["Location"] == f"/jobs/{job['id']}"
    assert job["state"] in ("queued", "running", "succeeded")
    assert job["params"] == {"dice": 3, "faces": 6, "max_face": None, "beats": "cycle"}

    final = wait_job(auth, job["id"])
    assert final["state"] == "succeeded", final
    assert final["result"]["wins"] == 21 and final["result"]["optimal"] is True
    assert final["attempts"] == 1 and final["run_seconds"] is not None


def test_requests_without_a_valid_key_get_401_json(client) -> None:
    for headers in ({}, {"Authorization": "Bearer zk_nope"}, {"Authorization": "Basic abc"}):
        response = client.post("/jobs", json=DICE, headers=headers)
        assert response.status_code == 401
        assert response.get_json()["code"] == 401 and "API key" in response.get_json()["message"]
    assert client.get("/jobs", headers={}).status_code == 401
    assert client.get(f"/jobs/{uuid.uuid4()}").status_code == 401


def test_health_and_spec_need_no_key(client, worker) -> None:
    from core.version import VERSION

    assert client.get("/health").get_json() == {"status": "ok", "version": VERSION}
    assert client.get("/ready").status_code == 200
    assert client.get("/openapi.json").status_code == 200


def test_another_clients_job_is_404_for_get_and_cancel(client, make_key) -> None:
    alice, bob, admin = make_key(), make_key(), make_key(admin=True)
    job = client.post("/jobs", json=DICE, headers=alice).get_json()
    assert client.get(f"/jobs/{job['id']}", headers=bob).status_code == 404
    assert client.post(f"/jobs/{job['id']}/cancel", headers=bob).status_code == 404
    assert job["id"] not in [j["id"] for j in client.get("/jobs", headers=bob).get_json()["items"]]
    assert client.get(f"/jobs/{job['id']}", headers=admin).status_code == 200
    assert job["id"] in [
        j["id"] for j in client.get("/jobs?kind=dice&limit=100", headers=admin).get_json()["items"]
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "chess", "params": {}}, "kind"),
        ({"params": {}}, "kind"),
        ({"kind": "dice", "params": {"dice": 3}}, "params"),
        ({"kind": "dice", "params": {"dice": 99, "faces": 6}}, "params"),
        ({"kind": "dice", "params": "three dice"}, "params"),
        ({"kind": "dice", "params": {"dice": 3, "faces": 6}, "time_limit": -1}, "time_limit"),
        ({"kind": "dice", "params": {"dice": 3, "faces": 6}, "time_limit": 10**9}, "time_limit"),
        ({"kind": "dice", "params": {"dice": 3, "faces": 6}, "extra": 1}, "extra"),
    ],
)
def test_bad_requests_get_422_with_field_messages(client, auth, body, field) -> None:
    response = client.post("/jobs", json=body, headers=auth)
    assert response.status_code == 422, response.get_json()
    error = response.get_json()
    assert error["code"] == 422 and field in error["errors"]


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        ("[]", "application/json"),
        ("null", "application/json"),
        ('"dice"', "application/json"),
        ('{"kind": "dice", "params": {"dice": 1e308, "faces": 6}}', "application/json"),
        ('{"kind": "dice", "params": {"dice": 3, "faces": 6, "beats": [[[[[]]]]]}}', "application/json"),
        ('{"kind": ["dice"], "params": []}', "application/json"),
        # json.loads raises ValueError past 4,300 digits and RecursionError this deep: both were a 500
        ('{"kind": "dice", "params": {"dice": 1' + "0" * 5000 + ', "faces": 6}}', "application/json"),
        ('{"kind": "dice", "params": {"dice": ' + "[" * 100_000 + "]" * 100_000 + "}}", "application/json"),
        ("kind=dice", "application/x-www-form-urlencoded"),
        ("\xff\xfe", "application/json"),
    ],
    ids=lambda value: value[:40],
)
def test_hostile_bodies_get_a_4xx_json_error(client, auth, data, content_type) -> None:
    for path in ("/jobs", "/batches"):
        response = client.post(path, data=data, headers={**auth, "Content-Type": content_type})
        assert 400 <= response.status_code < 500, (path, response.data)
        assert response.get_json()["code"] == response.status_code


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (
            b'{"kind": "dice", "params": {',
            "not valid JSON: Expecting property name enclosed in double quotes at line 1, column 29",
        ),
        (b'{"kind": "dice",\n "params" {}}', "not valid JSON: Expecting ':' delimiter at line 2, column 11"),
        (b'{"kind": "\xff"}', "not UTF-8 text: byte 11"),
    ],
    ids=["cut short", "line 2", "not UTF-8"],
)
def test_a_body_that_is_not_json_is_a_400_that_says_where(client, auth, data, says) -> None:
    """Before: Werkzeug's default "The browser (or proxy) sent a request that this server could not
    understand." (issue 50, item 2)."""
    for path in ("/jobs", "/batches"):
        response = client.post(path, data=data, headers={**auth, "Content-Type": "application/json"})
        error = response.get_json()
        assert response.status_code == 400 and error["code"] == 400, (path, error)
        assert says in error["message"], error


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_json_body_sent_as_another_type_is_a_415_that_says_to_send_json(client, auth, content_type) -> None:
    batch = {"kind": "dice", "items": [{"client_id": "a", "params": DICE["params"]}]}
    for path, body in (("/jobs", DICE), ("/batches", batch)):
        headers = {**auth, **({"Content-Type": content_type} if content_type else {})}
        response = client.post(path, data=json.dumps(body), headers=headers)
        assert response.status_code == 415, (path, response.get_json())
        error = response.get_json()
        assert error["code"] == 415 and error["status"] == "Unsupported Media Type"
        assert "Content-Type: application/json" in error["message"], error
    sent = client.post(
        "/jobs", data=json.dumps(DICE), headers={**auth, "Content-Type": "application/json; charset=utf-8"}
    )
    assert sent.status_code == 202


# Each of these was a 500, or was accepted and then failed in the worker, or was read as another number.
# time_limit is over the maximum, so params that pass are a 422 on time_limit alone and no job is made.
@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("taiji.solve", {"code": "²:0"}),  # int('²') after '²'.isdigit(): a 500
        ("taiji.solve", {"code": "٣:000"}),  # read as width 3
        ("leaving_earth.plan", {"origin": "E", "destination": "L", "cost": [0, math.inf]}),  # OverflowError
        ("leaving_earth.plan", {"origin": "E", "destination": "L", "time": [0, 10**400]}),
        ("leaving_earth.plan", {"origin": "E", "destination": "L", "payload": "١"}),
        ("planetx.enumerate", {"mode": "standard", "constraints": [{"sector": 13, "object": "comet"}]}),
        ("dice", {"dice": "٣", "faces": 6}),
        ("dice", {"dice": 3, "faces": 6, "max_face": -math.inf}),
        ("planetx.simulate", {"mode": "standard", "games": math.nan}),
        ("mastermind.play", {"n": 4, "k": 6, "secrets": {"sample": 5, "seed": 10**400}}),
        ("test.crash", {"note": "a\x00b"}),  # PostgreSQL cannot store NUL: once a 422 with no field named
        ("test.crash", {"note": "\ud800"}),  # nor a lone surrogate
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_hostile_params_are_a_422_naming_the_field(client, auth, kind, params) -> None:
    body = json.dumps({"kind": kind, "params": params, "time_limit": 10**9})
    response = client.post("/jobs", data=body, headers={**auth, "Content-Type": "application/json"})
    assert response.status_code == 422, response.get_json()
    errors = response.get_json()["errors"]
    assert list(errors) == ["params"] and errors["params"], errors


def test_numbers_sent_as_strings_are_the_fields_422_in_a_job_and_a_batch(client, auth) -> None:
    """Numbers are JSON numbers everywhere in a body: "3" is not 3, whichever field holds it."""
    strings = {"kind": "dice", "params": {"dice": "3", "faces": 6}}
    response = client.post("/jobs", json=strings, headers=auth)
    assert response.status_code == 422
    assert response.get_json()["errors"] == {"params": {"dice": ["Not a valid integer."]}}
    timed = {"kind": "dice", "params": {"dice": 3, "faces": 6}, "time_limit": "10"}
    response = client.post("/jobs", json=timed, headers=auth)
    assert response.status_code == 422
    assert response.get_json()["errors"] == {"time_limit": ["Not a valid number."]}

    items = [{"client_id": "a", "params": {"dice": 3, "faces": "6"}}]
    response = client.post(
        "/batches", json={"kind": "dice", "items": items, "time_limit": "10"}, headers=auth
    )
    assert response.status_code == 422
    assert response.get_json()["errors"] == {"time_limit": ["Not a valid number."]}
    response = client.post("/batches", json={"kind": "dice", "items": items}, headers=auth)
    assert response.status_code == 202
    (item,) = response.get_json()["items"]
    assert item["state"] == "rejected" and item["errors"] == {"params": {"faces": ["Not a valid integer."]}}


def test_param_errors_name_the_nested_field(client, auth) -> None:
    response = client.post("/jobs", json={"kind": "dice", "params": {"dice": 3}}, headers=auth)
    assert "faces" in response.get_json()["errors"]["params"]


def test_malformed_json_is_a_4xx_json_error(client, auth) -> None:
    response = client.post("/jobs", data="{not json", headers={**auth, "Content-Type": "application/json"})
    assert 400 <= response.status_code < 500
    assert "message" in response.get_json()


def test_oversized_body_is_413(client, auth, settings) -> None:
    blob = {"kind": "dice", "params": {"dice": 3, "faces": 6, "pad": "x" * (settings.max_body_bytes + 10)}}
    response = client.post("/jobs", json=blob, headers=auth)
    assert response.status_code == 413
    assert response.get_json()["code"] == 413


def test_idempotency_key_same_body_same_job_other_body_422(client, auth) -> None:
    headers = {**auth, "Idempotency-Key": f"order-{uuid.uuid4()}"}
    first = client.post("/jobs", json=DICE, headers=headers)
    again = client.post("/jobs", json=DICE, headers=headers)
    assert first.status_code == again.status_code == 202
    assert first.get_json()["id"] == again.get_json()["id"]
    assert again.headers["Idempotent-Replayed"] == "true"
    other = client.post("/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 5}}, headers=headers)
    assert other.status_code == 422 and "Idempotency-Key" in other.get_json()["errors"]


def test_same_idempotency_key_for_two_clients_is_two_jobs(client, make_key) -> None:
    key = f"shared-{uuid.uuid4()}"
    one = client.post("/jobs", json=DICE, headers={**make_key(), "Idempotency-Key": key}).get_json()
    two = client.post("/jobs", json=DICE, headers={**make_key(), "Idempotency-Key": key}).get_json()
    assert one["id"] != two["id"]


def test_list_is_paginated_newest_first_with_filters(client, auth) -> None:
    ids = [client.post("/jobs", json=DICE, headers=auth).get_json()["id"] for _ in range(5)]
    seen, url = [], "/jobs?limit=2"
    while url:
        response = client.get(url, headers=auth)
        page = response.get_json()
        seen += [job["id"] for job in page["items"]]
        assert len(page["items"]) <= 2
        url = f"/jobs?limit=2&cursor={page['next_cursor']}" if page["next_cursor"] else None
        if url:
            assert 'rel="next"' in response.headers["Link"]
    assert seen == list(reversed(ids))
    assert client.get("/jobs?kind=taiji.solve", headers=auth).get_json()["items"] == []
    # the next page's link keeps every filter, repeated ones too
    both = client.get("/jobs?state=queued&state=succeeded&state=running&limit=1", headers=auth)
    link = both.headers["Link"]
    assert all(f"state={state}" in link for state in ("queued", "succeeded", "running")), link
    assert client.get("/jobs?state=bogus", headers=auth).status_code == 422
    assert client.get("/jobs?cursor=garbage", headers=auth).status_code == 422
    assert client.get("/jobs?limit=0", headers=auth).status_code == 422


def test_a_repeated_kind_lists_the_jobs_of_any_of_them(client, make_key) -> None:
    """As `state` and as GET /events' `kind` (before: a 422, and before that the first kind alone)."""
    owner = make_key()
    mastermind = {"kind": "mastermind.play", "params": {"n": 3, "k": 4, "secrets": {"sample": 4, "seed": 3}}}
    made = {}
    for body in (DICE, mastermind, {"kind": "dice", "params": {"dice": 3, "faces": 5}}):
        response = client.post("/jobs", json=body, headers=owner)
        assert response.status_code == 202, response.get_json()
        made[response.get_json()["id"]] = body["kind"]
    newest_first = list(reversed(made))

    def listed(query: str) -> list[str]:
        ids, url = [], f"/jobs?{query}&limit=1"
        while url:
            response = client.get(url, headers=owner)
            assert response.status_code == 200, response.get_json()
            ids += [job["id"] for job in response.get_json()["items"]]
            url = response.headers["Link"].split(">")[0].lstrip("<") if "Link" in response.headers else None
        return ids

    assert listed("kind=dice&kind=mastermind.play") == newest_first
    assert listed("kind=dice&kind=taiji.solve&kind=dice") == [i for i in newest_first if made[i] == "dice"]
    unfailed = "state=queued&state=running&state=succeeded"  # whether a worker runs them or not
    assert listed(f"kind=taiji.solve&kind=mastermind.play&{unfailed}") == [
        i for i in newest_first if made[i] == "mastermind.play"
    ]
    assert listed("kind=dice&kind=mastermind.play&state=failed") == []


def test_an_unknown_kind_filter_is_a_422_naming_the_kinds(client, auth) -> None:
    """Before: `GET /jobs?kind=nope` was 200 with no items, `GET /events?kind=nope` an empty stream
    (issue 50, item 3)."""
    for path in ("/jobs?kind=nope", "/events?kind=dice&kind=nope"):
        response = client.get(path, headers=auth)
        error = response.get_json()
        assert response.status_code == 422, (path, response.data[:200])
        said = json.dumps(error["errors"]["kind"])  # /events: per item of the repeated kind
        assert "unknown kind; one of:" in said and "planetx.enumerate" in said, said


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"cursor": "²"}, "cursor"),
        ({"cursor": "٣"}, "cursor"),
        ({"cursor": "\x00"}, "cursor"),
        ({"cursor": "MjAyNC0wMS0wMXx4"}, "cursor"),  # base64 of a cursor-like "2024-01-01|x"
        ({"limit": "٣"}, "limit"),  # was read as 3
        ({"limit": "１０"}, "limit"),
        ({"limit": "1_0"}, "limit"),
        ({"limit": "2.5"}, "limit"),
    ],
)
def test_a_bad_list_query_is_a_422_naming_the_field(client, auth, query, field) -> None:
    response = client.get("/jobs", query_string=query, headers=auth)
    assert response.status_code == 422, response.get_json()
    assert field in response.get_json()["errors"]


def test_etag_gives_304_until_the_job_changes(client, auth, worker, wait_job) -> None:
    job = client.post("/jobs", json=DICE, headers=auth).get_json()
    wait_job(auth, job["id"])
    first = client.get(f"/jobs/{job['id']}", headers=auth)
    assert first.headers.get("ETag")
    assert "Retry-After" not in first.headers
    again = client.get(f"/jobs/{job['id']}", headers={**auth, "If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304
    assert again.data == b"" and again.headers["ETag"] == first.headers["ETag"]
    other = client.get(f"/jobs/{job['id']}", headers={**auth, "If-None-Match": '"another", "tag"'})
    assert other.status_code == 200 and other.get_json() == first.get_json()
    weak = client.get(f"/jobs/{job['id']}", headers={**auth, "If-None-Match": f"W/{first.headers['ETag']}"})
    assert weak.status_code == 304, "compared weakly: a compressing proxy marks the tag weak"


def test_queued_job_has_retry_after_and_cancel_means_it_never_starts(client, db, app, worker) -> None:
    from services.messages import enqueue
    from services.reads.jobs import job_view
    from services.resources import job_fields
    from store import jobs as job_store
    from store import keys
    from store.models import Job

    with db.session() as session:
        owner = keys.create_key(session, name="queued")
        job, _ = job_store.create_job(
            session, owner_id=owner.id, kind="dice", params={"dice": 3, "faces": 6}, time_limit=60
        )
        sent_ahead(session, job.id)  # with no message: it stays queued
    headers = {"Authorization": f"Bearer {owner.key}"}
    queued = client.get(f"/jobs/{job.id}", headers=headers)
    assert queued.get_json()["state"] == "queued" and queued.headers["Retry-After"] == "1"

    cancelled = client.post(f"/jobs/{job.id}/cancel", headers=headers)
    assert cancelled.status_code == 202 and cancelled.get_json()["state"] == "cancelled"
    with db.session() as session:  # rendered anew (the API keeps a finished job's answer)
        view = job_view(session.get(Job, job.id))
    waited = job_fields(view, is_admin=False)["queued_seconds"]
    time.sleep(0.05)  # time passing is what is tested: a job that never started waited until it ended
    assert job_fields(view, is_admin=False)["queued_seconds"] == waited
    assert waited == round((view.finished_at - view.created_at).total_seconds(), 3)
    enqueue(zolve(app).celery, str(job.id))  # a late delivery must not start it
    later = client.get(f"/jobs/{job.id}?wait=2", headers=headers).get_json()
    assert (later["state"], later["attempts"], later["result"]) == ("cancelled", 0, None)


def test_long_poll_returns_when_the_job_finishes(client, auth, worker) -> None:
    job = client.post("/jobs", json=DICE, headers=auth).get_json()
    finished = client.get(f"/jobs/{job['id']}?wait=20", headers=auth).get_json()
    assert finished["state"] == "succeeded"
    assert client.get(f"/jobs/{job['id']}?wait=-1", headers=auth).status_code == 422


def test_a_long_poll_is_woken_by_the_jobs_final_event(app, db, monkeypatch) -> None:
    """With no periodic re-read to fall back on, only the event feed can end the wait early."""
    import api.jobs
    from core.errors import ErrorType, JobError
    from core.states import JobState
    from core.waiting import Wake
    from store import jobs as job_store
    from store import keys

    monkeypatch.setattr(api.jobs, "WAIT_RECHECK_SECONDS", 60.0)
    holder = "long-poll test"  # no worker of that name: the sweeper leaves its lease alone
    with db.session() as session:
        owner = keys.create_key(session, name="long-poll")
        job, _ = job_store.create_job(
            session, owner_id=owner.id, kind="dice", params={"dice": 3, "faces": 6}, time_limit=60
        )
        job_store.claim(session, job.id, holder, lease_seconds=120)  # never held where a worker sees it
    headers = {"Authorization": f"Bearer {owner.key}"}
    waiting = threading.Event()  # the poll has read the job after subscribing, and waits for a wake-up
    wait = Wake.wait
    monkeypatch.setattr(Wake, "wait", lambda wake, timeout: (waiting.set(), wait(wake, timeout))[1])
    answers: list[tuple[float, dict]] = []

    def long_poll() -> None:
        started = time.monotonic()
        answer = app.test_client().get(f"/jobs/{job.id}?wait=20", headers=headers).get_json()
        answers.append((time.monotonic() - started, answer))

    poll = threading.Thread(target=long_poll)
    poll.start()
    assert waiting.wait(10)
    with db.session() as session:
        stopped = JobError(ErrorType.CANCELLED, "stopped by the test")
        assert job_store.finish(session, job.id, holder, state=JobState.CANCELLED, error=stopped)
    poll.join(30)
    [(seconds, answer)] = answers
    assert answer["state"] == "cancelled" and seconds < 10


def test_unknown_job_and_bad_ids_are_404(client, auth) -> None:
    assert client.get(f"/jobs/{uuid.uuid4()}", headers=auth).status_code == 404
    response = client.get("/jobs/not-a-uuid", headers=auth)
    assert response.status_code == 404 and response.get_json()["code"] == 404


@pytest.mark.parametrize(
    ("path", "field"),
    [("boards?x=19", "x"), ("boards?limit=0", "limit"), ("boards?z=1", "z"), ("boards.csv?c=0", "c")],
)
def test_a_bad_rows_query_is_a_422_before_the_job_is_looked_up(client, auth, path, field) -> None:
    """As before the services refactor: the query is validated first, so even a missing job's bad query
    is a 422 naming the field (an unknown parameter too), not a 404."""
    response = client.get(f"/jobs/{uuid.uuid4()}/{path}", headers=auth)
    assert response.status_code == 422, response.get_json()
    assert field in response.get_json()["errors"]
    assert client.get(f"/jobs/{uuid.uuid4()}/boards?x=7", headers=auth).status_code == 404


def test_cancel_of_a_finished_job_is_409(client, auth, worker, wait_job) -> None:
    job = client.post("/jobs", json=DICE, headers=auth).get_json()
    wait_job(auth, job["id"])
    assert client.post(f"/jobs/{job['id']}/cancel", headers=auth).status_code == 409


def test_kinds_are_listed_and_documented(client) -> None:
    kinds = client.get("/kinds").get_json()
    dice = {"params_schema": "DiceParams", "result_schema": "DiceResult", "job_schema": "DiceJob"}
    dice["create_schema"] = "DiceJobCreate"
    dice["rows"] = None
    dice["example"] = {"dice": 3, "faces": 6}
    assert {"name": "dice", "summary": kinds[0]["summary"], **dice} in kinds
    from kinds import KINDS

    for kind in kinds:  # each example is what its kind's schema accepts
        assert KINDS[kind["name"]].params_schema().validate(kind["example"]) == {}, kind["name"]
    spec = client.get("/openapi.json").get_json()
    assert "DiceParams" in spec["components"]["schemas"]
    assert "/jobs/{job_id}" in spec["paths"]
    docs = client.get("/docs")
    assert docs.status_code == 200 and b"swagger" in docs.data.lower()
    with client.get("/docs/assets/swagger-ui-bundle.js") as bundle:  # a file, closed with its answer
        assert bundle.status_code == 200


def test_every_job_scoped_endpoint_hides_other_clients_jobs(app, client, make_key) -> None:
    """Walks the URL map, so an endpoint added later is covered without editing this test."""
    owner, stranger, admin = make_key(), make_key(), make_key(admin=True)
    job_id = client.post("/jobs", json=DICE, headers=owner).get_json()["id"]
    # the dashboard's job routes are admin-only (403 for any client key, whoever owns the job):
    # tests/api/test_admin.py walks them
    rules = [
        r for r in app.url_map.iter_rules() if "job_id" in r.arguments and not r.rule.startswith("/admin/")
    ]
    assert {r.endpoint for r in rules} >= {"jobs.JobItem", "jobs.cancel_job", "boards.boards_page"}
    for rule in rules:
        method = "POST" if "POST" in rule.methods else "GET"
        theirs = client.open(rule.rule.replace("<uuid:job_id>", job_id), method=method, headers=stranger)
        missing = client.open(
            rule.rule.replace("<uuid:job_id>", str(uuid.uuid4())), method=method, headers=stranger
        )
        # indistinguishable from a job that does not exist
        assert (theirs.status_code, theirs.get_json()) == (404, missing.get_json()), rule.rule
    assert client.get(f"/jobs/{job_id}", headers=owner).status_code == 200
    assert client.get(f"/jobs/{job_id}", headers=admin).status_code == 200


def test_keys_never_appear_in_responses_or_logs(client, make_key, worker, wait_job, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    headers = make_key()
    secret = headers["Authorization"].removeprefix("Bearer ")
    wrong = "zk_" + "w" * 40
    responses = [
        client.get("/jobs", headers={"Authorization": f"Bearer {wrong}"}),
        client.post("/jobs", json={"kind": "nope", "params": {}}, headers=headers),
        client.post("/jobs", json={**DICE, "params": {"dice": 99}}, headers=headers),
        client.get(f"/jobs/{uuid.uuid4()}", headers=headers),
    ]
    job = wait_job(headers, client.post("/jobs", json=DICE, headers=headers).get_json()["id"])
    assert job["state"] == "succeeded"
    for response in responses:
        assert 400 <= response.status_code < 500
        text = response.get_data(as_text=True)
        assert secret not in text and wrong not in text
    assert secret not in caplog.text and wrong not in caplog.text
    assert secret not in worker.log_path.read_text(errors="replace")


def test_a_result_returned_whole_has_no_items_to_page(client, auth, worker, wait_job) -> None:
    job = wait_job(auth, client.post("/jobs", json=DICE, headers=auth).get_json()["id"])
    assert "result_items" not in job["links"]
    response = client.get(f"/jobs/{job['id']}/result/items", headers=auth)
    assert response.status_code == 404 and "returned whole" in response.get_json()["message"]
    assert client.get(f"/jobs/{uuid.uuid4()}/result/items", headers=auth).status_code == 404


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("priority", 101, "Must be greater than or equal to -100 and less than or equal to 100."),
        ("priority", -101, "Must be greater than or equal to -100 and less than or equal to 100."),
        ("priority", 10**400, "Must be greater than or equal to -100 and less than or equal to 100."),
        ("priority", "5", "Not a valid integer."),
        ("priority", 1.5, "Not a valid integer."),
        ("priority", True, "Not a valid integer."),
        ("queue_timeout", 0, "Must be greater than or equal to 0.1 and less than or equal to 604800.0."),
        ("queue_timeout", 10**9, "Must be greater than or equal to 0.1 and less than or equal to 604800.0."),
        ("queue_timeout", "2", "Not a valid number."),
    ],
)
def test_a_bad_priority_or_queue_timeout_is_the_fields_422_in_a_job_and_a_batch(
    client, auth, field: str, value: object, message: str
) -> None:
    job = {"kind": "dice", "params": {"dice": 3, "faces": 6}, field: value}
    response = client.post("/jobs", json=job, headers=auth)
    assert response.status_code == 422 and response.get_json()["errors"] == {field: [message]}
    batch = {"kind": "dice", "items": [{"client_id": "a", "params": {"dice": 3, "faces": 6}}], field: value}
    response = client.post("/batches", json=batch, headers=auth)
    assert response.status_code == 422 and response.get_json()["errors"] == {field: [message]}


def test_a_jobs_priority_and_queue_timeout_are_in_its_resource_and_a_batchs_jobs_take_them(
    client, auth
) -> None:
    plain = client.post("/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 3}}, headers=auth)
    assert (plain.get_json()["priority"], plain.get_json()["queue_timeout"]) == (0, None)
    job = {"kind": "dice", "params": {"dice": 3, "faces": 6}, "priority": -7, "queue_timeout": 30.5}
    made = client.post("/jobs", json=job, headers=auth).get_json()
    assert (made["priority"], made["queue_timeout"]) == (-7, 30.5)
    items = [{"client_id": "a", "params": {"dice": 3, "faces": 5}}]
    batch = client.post("/batches", json={"kind": "dice", "items": items, "priority": 9}, headers=auth)
    (item,) = batch.get_json()["items"]
    polled = client.get(f"/jobs/{item['job_id']}", headers=auth).get_json()
    assert (polled["priority"], polled["queue_timeout"]) == (9, None)


def test_a_compressed_body_is_a_415_whatever_it_holds(client, auth) -> None:
    """Before: gzip was read as text ("not UTF-8") and plain JSON labelled gzip was taken (the security
    audit)."""
    plain = json.dumps(DICE).encode()
    for body, encoding in ((gzip.compress(plain), "gzip"), (plain, "gzip"), (plain, "br")):
        headers = {**auth, "Content-Type": "application/json", "Content-Encoding": encoding}
        refused = client.post("/jobs", data=body, headers=headers)
        message = refused.get_json()["message"]
        assert refused.status_code == 415 and f"Content-Encoding {encoding} is not taken" in message, message
    headers = {**auth, "Content-Type": "application/json", "Content-Encoding": "identity"}
    assert client.post("/jobs", data=plain, headers=headers).status_code == 202


def test_a_query_parameter_of_one_value_given_twice_is_a_422(client, auth) -> None:
    job = client.post("/jobs", json=DICE, headers=auth).get_json()
    for path, name in (("/jobs?limit=1&limit=2", "limit"), (f"/jobs/{job['id']}?wait=0&wait=1", "wait")):
        refused = client.get(path, headers=auth)
        assert refused.status_code == 422, (path, refused.get_json())
        assert refused.get_json()["errors"]["query"] == {name: ["given more than once: give it once"]}
    assert client.get("/jobs?state=queued&state=running&limit=5", headers=auth).status_code == 200


@pytest.mark.parametrize("fresh", ["yes", "true", 1, 0, None])
def test_fresh_is_a_json_boolean(client, auth, fresh) -> None:
    """As a body's numbers are JSON numbers (before: "yes", "true", 1 and 0 were taken)."""
    refused = client.post("/jobs", json={**DICE, "fresh": fresh}, headers=auth)
    assert refused.status_code == 422 and "fresh" in refused.get_json()["errors"], refused.get_json()
