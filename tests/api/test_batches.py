"""Batches through the real API, worker process and PostgreSQL: per-item states and results, a bad item never
fails the batch, identical requests solved once, pages, and another client's batch is 404."""

from __future__ import annotations

from typing import Any

from tests.support import wait_until


def _plan(origin: str, destination: str, **extra: Any) -> dict[str, Any]:
    return {"origin": origin, "destination": destination, "launch": "two-stage", **extra}


def _wait_done(client, headers: dict[str, str], location: str, timeout: float = 120) -> dict:  # noqa: ANN001
    def done() -> dict | None:
        body = client.get(location, headers=headers).get_json()
        return body if body["done"] else None

    return wait_until(done, timeout, 0.2, "the batch to finish")


def test_batch_solves_items_in_parallel_and_dedupes(client, auth, worker) -> None:  # noqa: ANN001
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


def test_batch_items_are_paged_in_order(client, auth, worker) -> None:  # noqa: ANN001
    items = [{"client_id": f"lunar-{n}", "params": _plan("Lo", "Eo", payload=n)} for n in range(1, 8)]
    created = client.post("/batches", json={"items": items}, headers=auth).get_json()
    _wait_done(client, auth, created["links"]["self"])
    seen, cursor = [], None
    while True:
        query = "?limit=3" + (f"&cursor={cursor}" if cursor else "")
        page = client.get(created["links"]["self"] + query, headers=auth).get_json()
        seen += [item["client_id"] for item in page["items"]]
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert seen == [item["client_id"] for item in items]
    costs = [item["result"]["cost"] for item in _wait_done(client, auth, created["links"]["self"])["items"]]
    assert costs == sorted(costs)  # heavier payloads never cost less


def test_batch_validation_is_field_level(client, auth) -> None:  # noqa: ANN001
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


def test_another_clients_batch_is_not_found(client, make_key) -> None:  # noqa: ANN001
    owner, stranger = make_key(), make_key()
    created = client.post(
        "/batches", json={"items": [{"client_id": "a", "params": _plan("Lo", "Eo")}]}, headers=owner
    )
    location = created.get_json()["links"]["self"]
    assert client.get(location, headers=stranger).status_code == 404
    assert client.get(location, headers=owner).status_code == 200
    assert client.get(location).status_code == 401
