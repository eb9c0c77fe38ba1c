"""Issue 37, item 9: a cache hit never tells one client about another's work: no other client's job id in
the answer, its headers or the job's event stream, and nothing marks the job as served from a cache. The
same client's own hit still says so (its own job id is its own business)."""

from __future__ import annotations

import uuid

import requests
from sqlalchemy import func

from kinds import KINDS
from store import jobs as job_store
from store import keys
from tests.security.helpers import bearer_token

KIND = "planetx.enumerate"


def _unique_params() -> dict:
    """Params no other test enumerates (a sector fact of its own), as the kind reads them."""
    sector = 2 + uuid.uuid4().int % 10
    facts = [{"sector": sector, "object": "dwarf_planet", "present": False}, {"sector": 1, "object": "comet"}]
    return KINDS[KIND].load_params({"mode": "standard", "constraints": facts})


def _succeeded_enumeration(db, headers: dict[str, str], params: dict) -> str:
    """A's finished enumeration, stored as the worker leaves one (its own rows)."""
    with db.session() as session:
        owner = keys.authenticate(session, bearer_token(headers)).id
        job, _ = job_store.create_job(session, owner_id=owner, kind=KIND, params=params, time_limit=60)
        job.state, job.rows_job_id, job.result = "succeeded", job.id, {"count": 7}
        job.shards_total = job.shards_done = 3
        job.rows_done = 7
        job.started_at = job.finished_at = func.now()
        return str(job.id)


def _stream(live_api, headers: dict[str, str], job_id: str) -> str:
    url = f"{live_api.url}/jobs/{job_id}/events"
    with requests.get(url, headers=headers, stream=True, timeout=30) as response:
        assert response.status_code == 200
        return response.text  # the job is final: the stream ends after its last event


def test_a_hit_on_another_clients_job_looks_like_fresh_work(live_api, db, make_key) -> None:
    alice, bob = make_key(), make_key()
    params = _unique_params()
    alices = _succeeded_enumeration(db, alice, params)
    response = requests.post(
        f"{live_api.url}/jobs", json={"kind": KIND, "params": params}, headers=bob, timeout=30
    )
    assert response.status_code == 202
    job = response.json()
    assert job["id"] != alices and job["result"] == {"count": 7}, "served from Alice's enumeration"
    assert "X-Zolve-Cache" not in response.headers
    assert alices not in response.text and alices not in str(response.headers)
    assert "cached" not in (job["progress"] or {})
    events = _stream(live_api, bob, job["id"])
    assert alices not in events and "cached" not in events
    again = requests.get(f"{live_api.url}/jobs/{job['id']}", headers=bob, timeout=30)
    assert alices not in again.text and "cached" not in again.text


def test_a_hit_on_the_clients_own_job_still_says_so(live_api, db, make_key) -> None:
    alice = make_key()
    params = _unique_params()
    first = _succeeded_enumeration(db, alice, params)
    response = requests.post(
        f"{live_api.url}/jobs", json={"kind": KIND, "params": params}, headers=alice, timeout=30
    )
    assert response.status_code == 202 and response.headers["X-Zolve-Cache"] == "hit"
    assert first in _stream(live_api, alice, response.json()["id"])
