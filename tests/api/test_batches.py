"""Batches through the real API, worker process and PostgreSQL: per-item states and results, a bad item never
fails the batch, identical requests solved once, pages, and another client's batch is 404."""

from __future__ import annotations

import csv
import io
import json
import math
import uuid
from typing import Any
from unittest.mock import ANY

import pytest
from sqlalchemy import func, select, update

from store import keys
from store.batches import NewItem, create_batch
from store.models import Batch, Job, JobEvent
from tests.support import wait_until


def _plan(origin: str, destination: str, **extra: Any) -> dict[str, Any]:
    return {"origin": origin, "destination": destination, "launch": "two-stage", **extra}


def _wait_done(client, headers: dict[str, str], location: str, timeout: float = 120) -> dict:
    def done() -> dict | None:
        body = client.get(location, headers=headers).get_json()
        return body if body["done"] else None

    return wait_until(done, timeout, 0.2, "the batch to finish")


def test_batch_solves_items_in_parallel_and_dedupes(client, auth, worker) -> None:
    items = [
        {"client_id": "moon", "params": _plan("E", "L")},
        {"client_id": "moon-again", "params": _plan("E", "L")},
        {"client_id": "mercury", "params": _plan("Eo", "H", components={"ion": "1"})},
        {"client_id": "nowhere", "params": _plan("E", "X")},
        {"client_id": "broke", "params": _plan("E", "L", cost="-5")},
    ]
    response = client.post("/batches", json={"items": items}, headers=auth)
    assert response.status_code == 202, response.get_json()
    created = response.get_json()
    assert response.headers["Location"] == created["links"]["self"]
    assert created["item_count"] == 5 and created["job_count"] == 3  # "moon" twice, "nowhere" rejected

    batch = _wait_done(client, auth, created["links"]["self"])
    by_id = {item["client_id"]: item for item in batch["items"]}
    assert [item["client_id"] for item in batch["items"]] == [i["client_id"] for i in items]
    assert by_id["moon"]["job_id"] == by_id["moon-again"]["job_id"]
    assert by_id["moon"]["state"] == by_id["moon-again"]["state"] == "succeeded"
    assert (by_id["moon"]["result"]["cost"], by_id["moon"]["result"]["mass"]) == (21, 23)
    assert (by_id["mercury"]["result"]["cost"], by_id["mercury"]["result"]["time"]) == (11, 7)
    assert by_id["nowhere"]["state"] == "rejected" and "destination" in by_id["nowhere"]["errors"]["params"]
    assert by_id["broke"]["state"] == "succeeded" and by_id["broke"]["result"]["status"] == "infeasible"
    assert batch["counts"] == {"succeeded": 4, "rejected": 1}


def test_batch_items_are_paged_in_order(client, auth, worker) -> None:
    items = [{"client_id": f"lunar-{n}", "params": _plan("Lo", "Eo", payload=n)} for n in range(1, 8)]
    created = client.post("/batches", json={"items": items}, headers=auth).get_json()
    _wait_done(client, auth, created["links"]["self"])
    seen, cursor = [], None
    while True:
        query = "?limit=3" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(created["links"]["self"] + query, headers=auth).get_json()
        assert page["items"], "a cursor leads to a page with items"
        seen += [item["client_id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [item["client_id"] for item in items]
    whole = client.get(created["links"]["self"] + "?limit=7", headers=auth).get_json()
    assert len(whole["items"]) == 7 and whole["next_cursor"] is None, "a full last page leads nowhere"
    costs = [item["result"]["cost"] for item in _wait_done(client, auth, created["links"]["self"])["items"]]
    assert costs == sorted(costs)  # heavier payloads never cost less


def test_batch_validation_is_field_level(client, auth) -> None:
    cases = [
        ({"items": []}, "items"),
        ({"items": [{"client_id": "a"}, {"client_id": "a"}]}, "items"),
        ({"kind": "no.such", "items": [{"client_id": "a"}]}, "kind"),
        ({"items": [{"client_id": "a"}] * 501}, "items"),
        ({"items": [{"params": {}}]}, "items"),
        ({"items": [{"client_id": "a"}, 0, {"client_id": "a"}]}, "items"),  # once a 500 (found by fuzzing)
    ]
    for body, field in cases:
        response = client.post("/batches", json=body, headers=auth)
        assert response.status_code == 422, body
        errors = response.get_json()["errors"]
        assert field in errors.get("json", errors), (body, errors)


# Each hostile item (once a 500 for the whole batch, or accepted and failing in the worker, or read as another
# number) is rejected with its field errors; the good item of each batch runs.
HOSTILE_ITEMS = {
    "leaving_earth.plan": [
        _plan("E", "L", cost=[0, math.inf]),
        _plan("E", "L", time=[0, math.nan]),
        _plan("E", "L", cost="٣"),
        _plan("E", "L", components={"juno": "²"}),
        _plan("E", "L", payload=10**400),
        _plan("E", "L", free_ions="１"),
        {**_plan("E", "L"), "\x00": 1},  # its message names the key: PostgreSQL cannot store the NUL
    ],
    "taiji.solve": [{"code": "²:0"}, {"code": "٣:000"}, {"code": "1:Kw٣"}, {"code": "1:+\x00"}],
    "planetx.enumerate": [{"mode": "standard", "constraints": [{"sector": 13, "object": "comet"}]}],
    "dice": [
        {"dice": "٣", "faces": 6},
        {"dice": 3.5, "faces": 6},
        {"dice": 3, "faces": 6, "max_face": math.inf},
    ],
}
GOOD_ITEM = {
    "leaving_earth.plan": _plan("E", "L"),
    "taiji.solve": {"code": "2:00"},
    "planetx.enumerate": {"mode": "standard", "constraints": [{"sector": 1, "object": "planet_x"}]},
    "dice": {"dice": 3, "faces": 4},
}


@pytest.mark.parametrize("kind", sorted(HOSTILE_ITEMS))
def test_each_hostile_item_is_rejected_with_field_errors_and_the_others_run(
    client, auth, worker, kind
) -> None:
    items = [{"client_id": f"bad-{n}", "params": params} for n, params in enumerate(HOSTILE_ITEMS[kind])]
    items.insert(len(items) // 2, {"client_id": "good", "params": GOOD_ITEM[kind]})
    body = json.dumps({"kind": kind, "items": items})
    response = client.post("/batches", data=body, headers={**auth, "Content-Type": "application/json"})
    assert response.status_code == 202, response.get_json()
    assert response.get_json()["job_count"] == 1
    batch = _wait_done(client, auth, response.get_json()["links"]["self"])
    for item in batch["items"]:
        if item["client_id"] == "good":
            assert item["state"] == "succeeded", item
        else:
            assert item["state"] == "rejected" and item["job_id"] is None, item
            assert list(item["errors"]) == ["params"] and item["errors"]["params"], item


def test_an_unstorable_client_id_is_a_field_error(client, auth) -> None:
    for client_id in ("a\x00b", "\ud800"):  # a lone surrogate was a 500
        body = json.dumps({"items": [{"client_id": client_id, "params": _plan("E", "L")}]})
        response = client.post("/batches", data=body, headers={**auth, "Content-Type": "application/json"})
        assert response.status_code == 422, response.get_json()
        assert response.get_json()["errors"]["items"] == {"0": {"client_id": [ANY]}}


def test_a_bad_batch_cursor_is_a_field_error(client, auth) -> None:
    # no worker needed: a batch of one rejected item
    created = client.post("/batches", json={"items": [{"client_id": "a", "params": {}}]}, headers=auth)
    location = created.get_json()["links"]["self"]
    assert client.get(location, query_string={"cursor": "0"}, headers=auth).status_code == 200
    # '²' was a 500 (isdigit() then int()), '٣' was read as 3, 10 digits were a 422 from the database
    for cursor in ["²", "٣", "１", "-1", "1.5", " 1", "1\n", "9999999999", "9" * 20, "\x00", ""]:
        response = client.get(location, query_string={"cursor": cursor}, headers=auth)
        assert response.status_code == 422, (cursor, response.get_json())
        assert list(response.get_json()["errors"]) == ["cursor"], cursor


def test_another_clients_batch_is_not_found(client, make_key) -> None:
    owner, stranger = make_key(), make_key()
    created = client.post(
        "/batches", json={"items": [{"client_id": "a", "params": _plan("Lo", "Eo")}]}, headers=owner
    )
    location = created.get_json()["links"]["self"]
    assert client.get(location, headers=stranger).status_code == 404
    assert client.get(location, headers=owner).status_code == 200
    assert client.get(location).status_code == 401
    for fmt in ("ndjson", "csv"):
        export = created.get_json()["links"][fmt]
        assert client.get(export, headers=stranger).status_code == 404
        assert client.get(export).status_code == 401


def test_a_batch_exports_whole_as_ndjson_and_csv(client, auth, worker) -> None:
    items = [
        {"client_id": "moon", "params": _plan("E", "L")},
        {"client_id": "nowhere", "params": _plan("E", "X")},
        {"client_id": 'lunar,"quoted"', "params": _plan("Lo", "Eo")},
    ]
    created = client.post("/batches", json={"items": items}, headers=auth).get_json()
    batch = _wait_done(client, auth, created["links"]["self"])

    ndjson = client.get(created["links"]["ndjson"], headers=auth)
    assert ndjson.status_code == 200 and ndjson.mimetype == "application/x-ndjson"
    # read whole before it is sent (a slow client then holds no thread or connection): its length is known
    assert int(ndjson.headers["Content-Length"]) == len(ndjson.get_data())
    lines = [json.loads(line) for line in ndjson.get_data(as_text=True).splitlines()]
    assert lines == json.loads(json.dumps(batch["items"])), "the same items as the batch's own page"

    answer = client.get(created["links"]["csv"], headers=auth)
    assert answer.status_code == 200 and answer.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(answer.get_data(as_text=True))))
    assert [row["client_id"] for row in rows] == [item["client_id"] for item in items]
    by_id = {row["client_id"]: row for row in rows}
    assert json.loads(by_id["moon"]["result"])["cost"] == 21 and by_id["moon"]["state"] == "succeeded"
    assert by_id["nowhere"]["state"] == "rejected"
    assert "destination" in json.loads(by_id["nowhere"]["errors"])["params"]


def test_a_batch_repeated_with_its_idempotency_key_is_made_once(client, make_key, db) -> None:
    """A client that repeats a POST /batches after a dropped answer gets the batch made the first time,
    and no second one; the same key with another request is refused; another client's key is its own."""
    owner = make_key()
    key = {"Idempotency-Key": f"nightly-plans-{uuid.uuid4()}"}

    def made() -> int:
        with db.session() as session:
            return session.scalar(select(func.count()).where(Batch.idempotency_key == key["Idempotency-Key"]))

    body = {"items": [{"client_id": "a", "params": _plan("Lo", "Eo")}, {"client_id": "b", "params": {}}]}
    first = client.post("/batches", json=body, headers={**owner, **key})
    again = client.post("/batches", json=body, headers={**owner, **key})
    assert first.status_code == again.status_code == 202
    assert again.get_json()["id"] == first.get_json()["id"]
    assert again.headers["Location"] == first.headers["Location"]
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert made() == 1

    other = {"items": [{"client_id": "a", "params": _plan("Lo", "Mo")}]}
    refused = client.post("/batches", json=other, headers={**owner, **key})
    assert refused.status_code == 422 and "Idempotency-Key" in refused.get_json()["errors"]
    theirs = client.post("/batches", json=body, headers={**make_key(), **key})
    assert theirs.status_code == 202 and theirs.get_json()["id"] != first.get_json()["id"]
    assert made() == 2
    long_key = client.post("/batches", json=body, headers={**owner, "Idempotency-Key": "k" * 256})
    assert long_key.status_code == 422 and "Idempotency-Key" in long_key.get_json()["errors"]


def test_a_page_of_items_ends_early_once_their_results_are_large(make_app, make_key, db) -> None:
    """500 identical items show one job's result 500 times: a page ends once its results come to
    ZOLVE_MAX_BATCH_PAGE_BYTES (before: one page held every item's copy of it, the security audit)."""
    headers = make_key()
    small_pages = make_app(max_batch_page_bytes=5000).test_client()
    items = [
        NewItem(f"same{n}", {"dice": 3, "faces": 4, "max_face": None, "beats": "cycle"}) for n in range(7)
    ]
    with db.session() as session:  # succeeded as it is made: no worker runs it meanwhile
        owner = keys.authenticate(session, headers["Authorization"].split()[1]).id
        batch, [job_id], _ = create_batch(session, owner_id=owner, kind="dice", items=items, time_limit=60)
        session.execute(
            update(Job).where(Job.id == job_id).values(state="succeeded", result={"pad": "x" * 2000})
        )
        created = {"id": str(batch.id)}
    pages, url = [], f"/batches/{created['id']}?limit=5"
    while url:
        page = small_pages.get(url, headers=headers).get_json()
        pages.append([item["client_id"] for item in page["items"]])
        assert all(item["result"] == {"pad": "x" * 2000} for item in page["items"])
        url = (
            f"/batches/{created['id']}?limit=5&cursor={page['next_cursor']}" if page["next_cursor"] else None
        )
    assert pages == [["same0", "same1", "same2"], ["same3", "same4", "same5"], ["same6"]]
    whole = make_app().test_client().get(f"/batches/{created['id']}?limit=10", headers=headers).get_json()
    assert len(whole["items"]) == 7 and whole["next_cursor"] is None, "the default bytes hold them all"


def test_a_batch_is_cancelled_whole_and_only_by_its_owner(client, make_key, db) -> None:
    """Before, stopping a 500-item batch took 500 cancels (the fairness audit). Each unfinished job is
    asked once: queued ones end `cancelled` at once, running ones are `cancelling` until their worker
    stops them (test.hold takes no notice: it is not waited for here)."""
    import tests.plugins  # noqa: F401 - test.hold

    owner, other = make_key(), make_key()
    items = [{"client_id": f"h{n}", "params": {"seconds": 60, "release": f"h{n}"}} for n in range(4)]
    batch = client.post("/batches", json={"kind": "test.hold", "items": items}, headers=owner).get_json()
    assert client.post(f"/batches/{batch['id']}/cancel", headers=other).status_code == 404
    for _ in range(2):  # the second asks nothing new of anyone
        answer = client.post(f"/batches/{batch['id']}/cancel", headers=owner)
        assert answer.status_code == 202, answer.get_json()
        assert set(answer.get_json()["counts"]) <= {"cancelled", "cancelling"}, answer.get_json()["counts"]
        job_ids = [uuid.UUID(item["job_id"]) for item in answer.get_json()["items"]]
        with db.session() as session:
            asked = session.scalars(
                select(JobEvent.job_id)
                .where(JobEvent.job_id.in_(job_ids))
                .where(JobEvent.event.in_(("cancelled", "cancel_requested")))
            ).all()
        assert sorted(asked) == sorted(job_ids), "each job asked once, by the first cancel"
