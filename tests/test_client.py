"""The client library (client/zolve_client) against a real stack: the API under granian, the Celery worker,
PostgreSQL and Redis; its retries against a stub that answers 429 and 503."""

from __future__ import annotations

import io
import json
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from zolve_client import (
    Client,
    Conflict,
    Event,
    Invalid,
    JobFailed,
    NotFound,
    RateLimited,
    Unreachable,
    WaitTimeout,
)

from core.config import Settings
from tests.support import ApiServer, QuietHandler, serving, wait_until

#: a standard enumeration that leaves few boards: Planet X in sector 1, a comet in sector 2
FEW_BOARDS = {
    "mode": "standard",
    "shard_depth": 2,
    "constraints": [
        {"sector": 1, "object": "planet_x", "present": True},
        {"sector": 2, "object": "comet", "present": True},
    ],
}


@pytest.fixture
def api(live_api: ApiServer, worker, make_key: Callable[..., dict[str, str]]) -> Client:
    return Client(live_api.url, make_key()["Authorization"].split()[1])


def test_submit_wait_result_boards_and_export(api: Client) -> None:
    job = api.submit("planetx.enumerate", FEW_BOARDS, fresh=True)
    seen: list[dict] = []
    done = api.wait(job["id"], show_progress=False, on_update=seen.append)
    assert done["state"] == "succeeded" and seen[-1] == done
    shard_counts = [u["progress"]["shards_done"] for u in seen[:-1] if "shards_done" in (u["progress"] or {})]
    assert shard_counts and shard_counts == sorted(shard_counts), "progress came from the event stream"
    count = api.result(job["id"])["count"]
    boards = list(api.iter_boards(job["id"], page_size=50))
    assert len(boards) == count == len({board["code"] for board in boards}) and count > 50
    sector_one = list(api.iter_boards(job["id"], x=1))
    assert len(sector_one) == count, "every board has Planet X in sector 1"
    out = io.StringIO()
    assert api.export(job["id"], "ndjson", out, show_progress=False) == count
    assert {json.loads(line)["code"] for line in out.getvalue().splitlines()} == {b["code"] for b in boards}


def test_refusals_are_typed_and_carry_the_fields_messages(api: Client) -> None:
    with pytest.raises(Invalid) as invalid:
        api.submit("dice", {"dice": 1, "faces": 3})
    assert invalid.value.status == 422 and "dice" in invalid.value.errors["params"]
    with pytest.raises(Invalid) as private:
        api.submit("dice", {"dice": 3, "faces": 3}, callback_url="http://10.0.0.1/hook")
    assert "callback_url" in private.value.errors
    with pytest.raises(NotFound):
        api.get("00000000-0000-0000-0000-000000000000")
    done = api.wait(api.submit("dice", {"dice": 3, "faces": 3}, fresh=True)["id"], show_progress=False)
    with pytest.raises(Conflict, match=r"409: the job has already finished \(succeeded\)"):
        api.cancel(done["id"])
    with pytest.raises(Unreachable):
        Client("http://127.0.0.1:9", "zk_x", retries=0).get(done["id"])


def test_a_cancelled_jobs_result_is_a_job_failed(api: Client) -> None:
    job = api.submit("dice", {"dice": 3, "faces": 20}, fresh=True, time_limit=120)
    assert api.cancel(job["id"])["state"] in ("cancelled", "cancelling")
    with pytest.raises(JobFailed) as failed:
        api.result(job["id"], timeout=30)
    assert failed.value.job["state"] == "cancelled"


def test_a_priority_and_a_queue_timeout_go_with_a_job_and_a_batch(api: Client) -> None:
    job = api.submit("dice", {"dice": 3, "faces": 3}, fresh=True, priority=40, queue_timeout=600)
    assert (job["priority"], job["queue_timeout"]) == (40, 600)
    batch = api.submit_batch("dice", [{"client_id": "a", "params": {"dice": 3, "faces": 4}}], priority=-3)
    assert api.get(batch["items"][0]["job_id"])["priority"] == -3
    with pytest.raises(Invalid) as refused:
        api.submit("dice", {"dice": 3, "faces": 3}, priority=500)
    assert "priority" in refused.value.errors


def test_batches_page_by_page_and_the_webhook_secret(api: Client) -> None:
    items = [{"client_id": f"d{faces}", "params": {"dice": 3, "faces": faces}} for faces in (3, 4, 5)]
    key = f"dice-batch-{uuid.uuid4()}"
    batch = api.submit_batch("dice", [*items, {"client_id": "bad", "params": {}}], idempotency_key=key)
    again = api.submit_batch("dice", [*items, {"client_id": "bad", "params": {}}], idempotency_key=key)
    assert again["id"] == batch["id"], "a repeat under the same key is the same batch"
    for item in batch["items"]:
        if item["job_id"]:
            api.wait(item["job_id"], show_progress=False)
    got = list(api.iter_batch_items(batch["id"], page_size=1))
    assert [item["client_id"] for item in got] == ["d3", "d4", "d5", "bad"]
    assert [item["state"] for item in got] == ["succeeded"] * 3 + ["rejected"]
    assert "dice" in got[3]["errors"]["params"]
    secret = api.webhook_secret()
    assert secret.startswith("whsec_") and api.webhook_secret(rotate=True) != secret


def test_wait_long_polls_when_no_stream_is_to_be_had(api: Client, live_api: ApiServer) -> None:
    job = api.submit("dice", {"dice": 3, "faces": 5}, fresh=True)
    # every stream this key may hold (the default ZOLVE_MAX_STREAMS_PER_KEY of the live API)
    held = [api._send("GET", "/events", stream=True) for _ in range(Settings().max_streams_per_key)]
    impatient = Client(api.url, api._headers["Authorization"].split()[1], retries=0)
    try:
        with pytest.raises(RateLimited):
            impatient._send("GET", f"/jobs/{job['id']}/events", stream=True)
        assert impatient.wait(job["id"], show_progress=False)["state"] == "succeeded"
    finally:
        for stream in held:
            stream.close()


def _slow_job(api: Client, seconds: float) -> dict:
    """A job that runs about `seconds` (one test.sharded shard) and says nothing meanwhile."""
    return api.submit("test.sharded", {"shard_seconds": seconds}, fresh=True, time_limit=120)


def test_wait_gives_up_at_its_timeout_on_a_quiet_stream(api: Client) -> None:
    job = _slow_job(api, 20)
    try:
        wait_until(lambda: api.get(job["id"])["state"] == "running", 30, what="the job to run")
        started = time.monotonic()
        with pytest.raises(WaitTimeout):
            api.wait(job["id"], timeout=2, show_progress=False)
        assert time.monotonic() - started < 4, "the deadline holds while only keepalives come"
    finally:
        api.cancel(job["id"])


def test_wait_outlives_the_servers_stream_limit(
    worker, worker_env: dict[str, str], make_key: Callable[..., dict[str, str]], tmp_path
) -> None:
    env = {**worker_env, "ZOLVE_RATE_LIMIT": "", "ZOLVE_SUBMIT_RATE_LIMIT": "", "ZOLVE_SECRET_KEY": "test"}
    env |= {"ZOLVE_STREAM_MAX_SECONDS": "1", "ZOLVE_STREAM_KEEPALIVE_SECONDS": "1"}
    server = ApiServer(env, tmp_path / "api.log").start()
    try:
        api = Client(server.url, make_key()["Authorization"].split()[1])
        job = _slow_job(api, 8)
        try:
            assert api.result(job["id"], timeout=60) == {"count": 1, "keys": ["a"]}
        finally:
            if api.get(job["id"])["state"] != "succeeded":
                api.cancel(job["id"])
    finally:
        server.stop()


# -- retries --------------------------------------------------------------------------------------------
@pytest.fixture
def stub() -> Iterator[tuple[str, list[tuple[float, str]], list[tuple[int, dict, dict]]]]:
    """A server answering from a script of (status, headers, body), then 200 {"ok": true}; it records
    when each request came."""
    asked: list[tuple[float, str]] = []
    script: list[tuple[int, dict, dict]] = []

    class Handler(QuietHandler):
        def _answer(self) -> None:
            asked.append((time.monotonic(), self.command))
            status, headers, body = script.pop(0) if script else (200, {}, {"ok": True})
            self.answer(status, json.dumps(body).encode(), {**headers, "Content-Type": "application/json"})

        do_GET = do_POST = _answer  # noqa: N815 - the http.server hooks

    with serving(Handler) as url:
        yield url, asked, script


def test_429_and_503_are_retried_after_retry_after(stub) -> None:
    url, asked, script = stub
    script += [
        (429, {"Retry-After": "1"}, {"message": "slow down"}),
        (503, {}, {"message": "the database is unavailable"}),
    ]
    assert Client(url, "zk_x").get("job") == {"ok": True}
    assert len(asked) == 3 and asked[1][0] - asked[0][0] >= 0.95, "Retry-After: 1 was honoured"
    script += [(422, {}, {"message": "bad", "errors": {"kind": ["unknown"]}})]
    with pytest.raises(Invalid) as refused:
        Client(url, "zk_x").submit("nope")
    assert refused.value.errors == {"kind": ["unknown"]} and len(asked) == 4, "a 422 is not retried"
    script += [(429, {"Retry-After": "0"}, {"message": "slow down"})] * 3
    with pytest.raises(RateLimited):
        Client(url, "zk_x", retries=2).get("job")
    assert len(asked) == 7


def test_wait_keeps_its_timeout_when_the_service_answers_429(stub) -> None:
    """Retries back off within the caller's deadline: a service that keeps answering 429 with
    `Retry-After: 3` ends a 2-s wait() at once with WaitTimeout, not after 5 retries of 3 s (15 s)."""
    url, asked, script = stub
    script += [(200, {}, {"id": "job", "state": "running"})]
    script += [(429, {"Retry-After": "3"}, {"message": "slow down"})] * 10
    started = time.monotonic()
    with pytest.raises(WaitTimeout) as late:
        Client(url, "zk_x").wait("job", timeout=2, show_progress=False)
    assert isinstance(late.value.__cause__, RateLimited)
    assert time.monotonic() - started < 2.5 and len(asked) == 3, asked  # the job, its stream, one poll


def test_the_event_stream_parser_reads_ids_names_data_and_skips_comments() -> None:
    from zolve_client import parse_events

    lines = ["retry: 1000", "", ": keepalive", "", "id: 7", "event: progress", 'data: {"a": 1}', ""]
    (event,) = list(parse_events(iter(lines)))
    assert (event.id, event.event, event.data) == (7, "progress", {"a": 1})


def test_wait_shows_a_replayed_history_without_going_back_and_is_silent_by_default(capsys) -> None:
    """A job's stream replays its history first: the job was fetched `cancelling`, and the replay's
    `running` showed it running again (issue 50, item 5); and wait() wrote to stderr unasked."""
    client = Client("http://127.0.0.1:9", "zk_x")
    fetched = {"id": "j", "state": "cancelling", "started_at": "2026-11-27T12:00:01+00:00", "progress": {}}
    history = [
        Event(1, "created", {"at": "2026-11-27T12:00:00+00:00"}),
        Event(2, "running", {"at": "2026-11-27T12:00:01+00:00"}),
        Event(3, "requeued", {"at": "2026-11-27T12:00:00.5+00:00"}),  # before the run it was fetched in
        Event(4, "cancel_requested", {"at": "2026-11-27T12:00:02+00:00"}),
        Event(5, "progress", {"detail": {"done": 3}}),
        Event(6, "cancelled", {"at": "2026-11-27T12:00:03+00:00"}),
    ]
    final = {**fetched, "state": "cancelled"}
    client.get = lambda job_id, wait=None: fetched if wait is None else final  # type: ignore[method-assign]
    client._feed = lambda *args: iter(history)  # type: ignore[method-assign]
    seen: list[str] = []
    assert client.wait("j", on_update=lambda job: seen.append(job["state"]))["state"] == "cancelled"
    assert seen == ["cancelling", "cancelling", "cancelling", "cancelled"]
    assert capsys.readouterr().err == ""


def test_a_client_is_a_context_manager_that_closes_its_connections(api: Client, make_key) -> None:
    with Client(api.url, make_key()["Authorization"].split()[1]) as client:
        assert next(client.iter_jobs(), None) is None, "a new key has no jobs"
        assert client._pool.pools, "a kept connection"
    assert not client._pool.pools, "closed on the way out"
