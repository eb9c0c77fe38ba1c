"""What one client cannot take from the others in an API process: its long-polls and exports are capped
(a waiting long-poll holds no thread), the probes always answer, and PostgreSQL stops a pathological
statement."""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from sqlalchemy import text

from api.extension import zolve
from tests.support import TEST_ENV, HeldJob, free_port, installed_popen, wait_until

SLOW = {"kind": "test.sharded", "params": {"plan_seconds": 2, "keys": ["a"], "shard_seconds": 4}}
#: more than the served API's 8 threads: a waiting long-poll holds none (core.waiting)
WAITING_PER_KEY = 20


@pytest.fixture
def served_api(settings, tmp_path: Path):
    """The API under granian, one process with 8 threads, as `zolve api` serves it."""
    port = free_port()
    env = {
        **os.environ,
        **TEST_ENV,
        "DATABASE_URL": settings.database_url,
        "REDIS_URL": settings.redis_url,
        "ZOLVE_RATE_LIMIT": "",
        "ZOLVE_SUBMIT_RATE_LIMIT": "",
        "ZOLVE_MAX_WAITING_PER_KEY": str(WAITING_PER_KEY),
    }
    log = (tmp_path / "api.log").open("wb")
    command = ["api", "--port", str(port), "--workers", "1", "--threads", "8"]
    process = installed_popen(command, env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(url + "/health"), 60, what="the API")
        yield url
    finally:
        process.terminate()
        process.wait(20)
        log.close()


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=1).ok
    except requests.RequestException:
        return False


def test_33_long_polls_leave_the_probes_answering(served_api, make_key, worker) -> None:
    headers = make_key()
    job_id = requests.post(served_api + "/jobs", json=SLOW, headers=headers, timeout=10).json()["id"]

    def long_poll(_: int) -> float:
        started = time.monotonic()
        job = requests.get(f"{served_api}/jobs/{job_id}?wait=3", headers=headers, timeout=30).json()
        assert job["id"] == job_id
        return time.monotonic() - started

    with ThreadPoolExecutor(33) as pool:
        polls = pool.map(long_poll, range(33))
        time.sleep(0.5)  # every poll has arrived: more wait than the server has threads
        started = time.monotonic()
        assert requests.get(served_api + "/health", timeout=5).ok
        assert requests.get(served_api + "/ready", timeout=5).status_code in (200, 503)
        probe_seconds = time.monotonic() - started
        durations = sorted(polls)
    assert probe_seconds < 2, f"the probes took {probe_seconds:.1f} s beside 33 long-polls"
    waited = [d for d in durations if d >= 2.5]
    assert len(waited) == WAITING_PER_KEY, "one key waits in ZOLVE_MAX_WAITING_PER_KEY places, all of them"
    assert durations[0] < 2.5, "the polls beyond the cap answered at once"


def test_a_key_streams_only_its_share_of_exports_at_once(
    make_app, client, make_key, worker, wait_job
) -> None:
    headers, admin = make_key(), make_key(admin=True)
    body = {"kind": "planetx.enumerate", "params": {"mode": "standard"}}
    job = wait_job(headers, client.post("/jobs", json=body, headers=headers).get_json()["id"])
    one_each = make_app(max_exports_per_key=1).test_client()
    url = job["links"]["csv"]

    streaming = one_each.get(url, headers=headers, buffered=False)  # open until closed
    assert streaming.status_code == 200
    refused = one_each.get(url, headers=headers)
    assert refused.status_code == 429 and "at most 1 exports" in refused.get_json()["message"]
    assert "Retry-After" in refused.headers
    other = one_each.get(url, headers=admin)
    assert other.status_code == 200 and other.get_data(), "another key has its own share"
    other.close()
    streaming.close()
    again = one_each.get(url, headers=headers)
    assert again.status_code == 200 and again.get_data(as_text=True).startswith("code,board\n")


def test_a_batch_export_takes_one_of_the_keys_export_places(make_app, make_key) -> None:
    """A batch's results.ndjson is as large as its items' results: it counts among the key's exports, as
    a job's rows do (before: any number at once, each read whole on a request thread)."""
    headers = make_key()
    one_each = make_app(max_exports_per_key=1).test_client()
    items = [{"client_id": f"d{faces}", "params": {"dice": 3, "faces": faces}} for faces in (4, 5)]
    batch = one_each.post("/batches", json={"kind": "dice", "items": items}, headers=headers).get_json()
    streaming = one_each.get(batch["links"]["ndjson"], headers=headers, buffered=False)
    assert streaming.status_code == 200
    for url in (batch["links"]["csv"], batch["links"]["ndjson"]):
        refused = one_each.get(url, headers=headers)
        assert refused.status_code == 429 and "at most 1 exports" in refused.get_json()["message"], url
    streaming.close()
    again = one_each.get(batch["links"]["csv"], headers=headers)
    lines = again.get_data(as_text=True).splitlines()
    assert again.status_code == 200 and len(lines) == 3 and lines[0].startswith("position,client_id")


def test_an_export_lets_its_database_connection_go_before_its_client_reads(
    make_app, client, make_key, worker, wait_job
) -> None:
    """The rows are read whole into a spool: while the client drains the answer, the process's pool has
    no connection out for it (issue 65; under the edge no thread either: tests/test_edge.py)."""
    headers = make_key()
    body = {"kind": "planetx.enumerate", "params": {"mode": "standard"}}
    job = wait_job(headers, client.post("/jobs", json=body, headers=headers).get_json()["id"])
    tiny_spool = make_app(export_spool_bytes=1024)  # the rest in a temporary file
    answer = tiny_spool.test_client().get(job["links"]["csv"], headers=headers, buffered=False)
    try:
        chunks, read = iter(answer.response), b""
        while read.count(b"\n") < 2:  # some boards read, more to come
            read += next(chunks)
        assert read.startswith(b"code,board\n")
        assert zolve(tiny_spool).db.engine.pool.checkedout() == 0
        whole = read + b"".join(chunks)
    finally:
        answer.close()
    assert int(answer.headers["Content-Length"]) == len(whole)
    assert whole.count(b"\n") == 1 + int(answer.headers["X-Total-Count"])


def test_the_rows_of_a_job_that_did_not_succeed_are_not_exported(client, db) -> None:
    """A cancelled enumeration's boards are some of them, not all: 409 with its state, not a short CSV."""
    job = HeldJob.make(db, "planetx.enumerate", {"mode": "standard"})
    job.cancel()
    for fmt in ("csv", "ndjson"):
        refused = client.get(f"/jobs/{job.id}/boards.{fmt}", headers=job.headers)
        assert refused.status_code == 409 and "cancelled" in refused.get_json()["message"]
    assert (
        client.get(f"/jobs/{job.id}/boards", headers=job.headers).status_code == 200
    )  # pages: what is there


def test_the_api_has_a_statement_timeout(app) -> None:
    with zolve(app).db.session() as session:
        assert session.scalar(text("SHOW statement_timeout")) == "15s"
