"""taiji.enumerate through the service (a kind solved whole that stores rows): its solutions are stored
with its result, paged and exported like boards."""

from __future__ import annotations

import csv
import io
import json

from tests.puzzles.test_taiji import BY_ID

BLANK_DRAFT = {"grid": [[{}, {}, {}], [{}, {}, {}]]}  # 32 solutions up to a flip


def enumerate_job(client, auth, wait_job, params: dict) -> dict:
    response = client.post("/jobs", json={"kind": "taiji.enumerate", "params": params}, headers=auth)
    assert response.status_code == 202, response.get_json()
    job = wait_job(auth, response.get_json()["id"], 120)
    assert job["state"] == "succeeded", job
    return job


def test_every_solution_is_stored_paged_and_exported(client, auth, worker, wait_job) -> None:
    job = enumerate_job(client, auth, wait_job, BLANK_DRAFT)
    assert (job["result"]["count"], job["result"]["complete"]) == (32, True)
    links = job["links"]
    assert links["rows"].endswith("/solutions") and links["csv"].endswith("/solutions.csv")

    first = client.get(links["rows"], query_string={"limit": 20}, headers=auth).get_json()
    rest = client.get(
        links["rows"], query_string={"limit": 20, "cursor": first["next_cursor"]}, headers=auth
    ).get_json()
    items = first["items"] + rest["items"]
    assert [item["code"] for item in items] == list(range(32)) and rest["next_cursor"] is None
    assert len({item["solution"] for item in items}) == 32
    assert all(len(item["solution"]) == 7 and item["solution"][3] == "/" for item in items)

    exported = client.get(links["ndjson"], headers=auth)
    assert exported.headers["X-Total-Count"] == "32"
    assert [json.loads(line) for line in exported.get_data(as_text=True).splitlines()] == items
    table = list(csv.DictReader(io.StringIO(client.get(links["csv"], headers=auth).get_data(as_text=True))))
    assert [(int(r["code"]), r["solution"]) for r in table] == [(i["code"], i["solution"]) for i in items]


def test_the_cap_says_at_least_and_a_unique_puzzle_stores_one_row(client, auth, worker, wait_job) -> None:
    capped = enumerate_job(client, auth, wait_job, {**BLANK_DRAFT, "max_solutions": 4})
    assert capped["result"]["summary"] == "at least 4 solutions (max_solutions was reached)"
    page = client.get(capped["links"]["rows"], headers=auth).get_json()
    assert len(page["items"]) == 4
    unique = enumerate_job(client, auth, wait_job, {"code": BY_ID["SOLV0"][1]})
    assert unique["result"]["unique"] is True
    assert len(client.get(unique["links"]["rows"], headers=auth).get_json()["items"]) == 1


def test_bad_params_and_other_kinds_rows_are_refused(client, auth, worker, wait_job) -> None:
    refused = client.post(
        "/jobs", json={"kind": "taiji.enumerate", "params": {**BLANK_DRAFT, "max_solutions": 0}}, headers=auth
    )
    assert refused.status_code == 422 and "max_solutions" in refused.get_json()["errors"]["params"]
    job = enumerate_job(client, auth, wait_job, {**BLANK_DRAFT, "max_solutions": 2})
    boards = client.get(f"/jobs/{job['id']}/boards", headers=auth)
    assert boards.status_code == 404 and "no boards" in boards.get_json()["message"]
