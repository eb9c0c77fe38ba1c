"""The client library (client/zolve_client) against a real stack: the API under granian, the Celery worker,
PostgreSQL and Redis; its retries against a stub that answers 429 and 503."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from zolve_client import (
    ApiError,
    AsyncClient,
    BadGateway,
    Client,
    Conflict,
    ConnectionDropped,
    Event,
    GatewayTimeout,
    Invalid,
    JobFailed,
    NotConnected,
    NotFound,
    RateLimited,
    TimedOut,
    Unavailable,
    Unreachable,
    WaitTimeout,
)
from zolve_client.errors import retried, seconds_after
from zolve_client.kinds import DICE

from core.config import Settings
from tests.loops import run_on_own_loop
from tests.support import ApiServer, DroppingProxy, QuietHandler, serving, wait_until

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
def new_client(closing: contextlib.ExitStack) -> Callable[..., Client]:
    """Clients made as Client(...) is, each closed (its kept connections with it) when the test ends."""

    def _new(*args: Any, **kwargs: Any) -> Client:
        return closing.enter_context(Client(*args, **kwargs))

    return _new


@pytest.fixture
def api(live_api: ApiServer, worker, make_key: Callable[..., dict[str, str]], new_client) -> Client:
    return new_client(live_api.url, make_key()["Authorization"].split()[1])


def test_submit_wait_result_boards_and_export(api: Client) -> None:
    job = api.submit("planetx.enumerate", FEW_BOARDS, fresh=True)
    seen: list[dict] = []
    done = api.wait(job["id"], show_progress=False, on_update=seen.append)
    assert done["state"] == "succeeded" and seen[-1] == done
    shard_counts = [u["progress"]["shards_done"] for u in seen[:-1] if "shards_done" in (u["progress"] or {})]
    assert shard_counts and shard_counts == sorted(shard_counts), "progress came from the event stream"
    count = api.result(job["id"])["count"]
    boards = list(api.iter_rows(job["id"], page_size=50))
    assert len(boards) == count == len({board["code"] for board in boards}) and count > 50
    sector_one = list(api.iter_rows(job["id"], x=1))
    assert len(sector_one) == count, "every board has Planet X in sector 1"
    out = io.StringIO()
    assert api.export(job["id"], "ndjson", out, show_progress=False) == count
    assert {json.loads(line)["code"] for line in out.getvalue().splitlines()} == {b["code"] for b in boards}


def test_refusals_are_typed_and_carry_the_fields_messages(api: Client, new_client) -> None:
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
        new_client("http://127.0.0.1:9", "zk_x", retries=0).get(done["id"])


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


def test_wait_long_polls_when_no_stream_is_to_be_had(api: Client, new_client) -> None:
    job = api.submit("dice", {"dice": 3, "faces": 5}, fresh=True)
    # every stream this key may hold (the default ZOLVE_MAX_STREAMS_PER_KEY of the live API)
    events = api._call("GET", "/events")
    held = [api._send(events, stream=True) for _ in range(Settings().max_streams_per_key)]
    impatient = new_client(api.url, api._headers["Authorization"].split()[1], retries=0)
    try:
        with pytest.raises(RateLimited):
            impatient._send(impatient._call("GET", f"/jobs/{job['id']}/events"), stream=True)
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


def test_a_stream_of_every_job_ends_at_its_timeout(api: Client) -> None:
    """Your events never end by themselves: `timeout` ends them, while only keepalives come."""
    started = time.monotonic()
    with pytest.raises(WaitTimeout):
        for _ in api.events(timeout=2):
            pass
    assert time.monotonic() - started < 2 + 3, "the stream's timeout holds"


def test_the_async_stream_of_every_job_ends_at_its_timeout(
    live_api: ApiServer, make_key: Callable[..., dict[str, str]]
) -> None:
    key = make_key()["Authorization"].split()[1]

    async def read() -> None:
        async with AsyncClient(live_api.url, key) as client:
            async for _ in client.events(timeout=2):
                pass

    with pytest.raises(WaitTimeout):
        run_on_own_loop(read(), timeout=30)


def test_listings_take_a_timeout_for_each_page(api: Client) -> None:
    job = api.submit("dice", {"dice": 3, "faces": 4}, fresh=True)
    assert job["id"] in [found["id"] for found in api.iter_jobs(page_size=1, timeout=10)]


def test_listings_narrow_by_several_kinds(api: Client) -> None:
    dice = api.submit(DICE, {"dice": 3, "faces": 4}, fresh=True)
    guess = api.submit("mastermind.play", {"n": 3, "k": 4, "secrets": {"sample": 4, "seed": 3}}, fresh=True)
    both = [job["id"] for job in api.iter_jobs(kind=[DICE, "mastermind.play"], page_size=1)]
    assert both == [guess["id"], dice["id"]]
    assert [job["id"] for job in api.iter_jobs(kind=DICE)] == [dice["id"]]
    assert [job["id"] for job in api.iter_jobs(kind=("taiji.solve", "leaving_earth.plan"))] == []


def test_wait_outlives_the_servers_stream_limit(
    worker, worker_env: dict[str, str], make_key: Callable[..., dict[str, str]], new_client, tmp_path
) -> None:
    env = {**worker_env, "ZOLVE_RATE_LIMIT": "", "ZOLVE_SUBMIT_RATE_LIMIT": "", "ZOLVE_SECRET_KEY": "test"}
    env |= {"ZOLVE_STREAM_MAX_SECONDS": "1", "ZOLVE_STREAM_KEEPALIVE_SECONDS": "1"}
    server = ApiServer(env, tmp_path / "api.log").start()
    try:
        api = new_client(server.url, make_key()["Authorization"].split()[1])
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
def stub() -> Iterator[tuple[str, list[tuple[float, str, dict[str, str]]], list[tuple[int, dict, dict]]]]:
    """A server answering from a script of (status, headers, body), then 200 {"ok": true}; it records
    when each request came."""
    asked: list[tuple[float, str, dict[str, str]]] = []
    script: list[tuple[int, dict, dict]] = []

    class Handler(QuietHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            asked.append((time.monotonic(), self.command, dict(self.headers)))
            status, headers, body = script.pop(0) if script else (200, {}, {"ok": True})
            self.answer(status, json.dumps(body).encode(), {**headers, "Content-Type": "application/json"})

        do_GET = do_POST = _answer  # noqa: N815 - the http.server hooks

    with serving(Handler) as url:
        yield url, asked, script


def test_429_and_503_are_retried_after_retry_after(stub, new_client) -> None:
    url, asked, script = stub
    script += [
        (429, {"Retry-After": "1"}, {"message": "slow down"}),
        (503, {}, {"message": "the database is unavailable"}),
    ]
    assert new_client(url, "zk_x").get("job") == {"ok": True}
    assert len(asked) == 3 and asked[1][0] - asked[0][0] >= 0.95, "Retry-After: 1 was honoured"
    script += [(422, {}, {"message": "bad", "errors": {"kind": ["unknown"]}})]
    with pytest.raises(Invalid) as refused:
        new_client(url, "zk_x").submit("nope")
    assert refused.value.errors == {"kind": ["unknown"]} and len(asked) == 4, "a 422 is not retried"
    script += [(429, {"Retry-After": "0"}, {"message": "slow down"})] * 3
    with pytest.raises(RateLimited):
        new_client(url, "zk_x", retries=2).get("job")
    assert len(asked) == 7


def test_wait_keeps_its_timeout_when_the_service_answers_429(stub, new_client) -> None:
    """Retries back off within the caller's deadline: a service that keeps answering 429 with
    `Retry-After: 3` ends a 2-s wait() at once with WaitTimeout, not after 5 retries of 3 s (15 s)."""
    url, asked, script = stub
    script += [(200, {}, {"id": "job", "state": "running"})]
    script += [(429, {"Retry-After": "3"}, {"message": "slow down"})] * 10
    started = time.monotonic()
    with pytest.raises(WaitTimeout) as late:
        new_client(url, "zk_x").wait("job", timeout=2, show_progress=False)
    assert isinstance(late.value.__cause__, RateLimited)
    assert time.monotonic() - started < 2.5 and len(asked) == 3, asked  # the job, its stream, one poll


def test_the_event_stream_parser_reads_ids_names_data_and_skips_comments() -> None:
    from zolve_client import parse_events

    lines = ["retry: 1000", "", ": keepalive", "", "id: 7", "event: progress", 'data: {"a": 1}', ""]
    (event,) = list(parse_events(iter(lines)))
    assert (event.id, event.event, event.data) == (7, "progress", {"a": 1})


def test_wait_shows_a_replayed_history_without_going_back_and_is_silent_by_default(
    capsys, new_client
) -> None:
    """A job's stream replays its history first: the job was fetched `cancelling`, and the replay's
    `running` showed it running again (issue 50, item 5); and wait() wrote to stderr unasked."""
    client = new_client("http://127.0.0.1:9", "zk_x")
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
        assert client._http_client is not None, "a kept connection pool"
    assert client._http_client is None, "closed on the way out"
    assert next(client.iter_jobs(), None) is None, "a later call opens a new one"
    client.close()


# -- the retry policy -----------------------------------------------------------------------------------
def test_502_and_504_are_retried_for_a_get_and_a_keyed_post_but_not_for_a_bare_post(stub, new_client) -> None:
    url, asked, script = stub
    script += [(502, {}, {"message": "bad gateway"}), (504, {}, {"message": "gateway timeout"})]
    assert new_client(url, "zk_x").get("job") == {"ok": True} and len(asked) == 3
    script += [(502, {}, {"message": "bad gateway"})]
    assert new_client(url, "zk_x").submit("dice", {"dice": 3, "faces": 3}) == {"ok": True}
    first, again = asked[3][2], asked[4][2]
    assert first["Idempotency-Key"] and first["Idempotency-Key"] == again["Idempotency-Key"], "one key a call"
    assert new_client(url, "zk_x").submit("dice")["ok"]
    assert asked[5][2]["Idempotency-Key"] != first["Idempotency-Key"], "a new call, a new key"
    script += [(502, {}, {"message": "bad gateway"})]
    with pytest.raises(BadGateway):
        # no Idempotency-Key: it may have been cancelled, not asked twice
        new_client(url, "zk_x").cancel("job")
    assert len(asked) == 7


def test_a_calls_timeout_bounds_its_retries(stub, new_client) -> None:
    url, asked, script = stub
    script += [(503, {"Retry-After": "5"}, {"message": "busy"})] * 3
    with pytest.raises(Unavailable):
        new_client(url, "zk_x").get("job", timeout=1)
    assert len(asked) == 1, "a retry 5 s later would end after the call's timeout"


@pytest.mark.parametrize(
    ("error", "idempotent", "retried_"),
    [
        (NotConnected("refused"), False, True),
        (Unreachable("not sent: an unsupported scheme"), True, False),
        (RateLimited("slow down"), False, True),
        (Unavailable("busy"), False, True),
        (BadGateway("bad gateway"), False, False),
        (BadGateway("bad gateway"), True, True),
        (GatewayTimeout("gateway timeout"), True, True),
        (ConnectionDropped("reset"), False, False),
        (ConnectionDropped("reset"), True, True),
        (TimedOut("no answer"), True, False),
        (Invalid("bad"), True, False),
    ],
)
def test_what_is_retried(error: ApiError, idempotent: bool, retried_: bool) -> None:
    """Anything the service did not act on; what it may have acted on only when repeating it is harmless
    (a GET, a POST under an Idempotency-Key); never a timeout, whose wait the caller chose."""
    assert retried(error, idempotent) is retried_


def test_retry_after_is_seconds_or_an_http_date() -> None:
    assert seconds_after("3") == 3.0 and seconds_after("0.5") == 0.5
    later = datetime.now(UTC) + timedelta(seconds=30)
    assert 25 < (seconds_after(format_datetime(later, usegmt=True)) or 0) <= 30
    assert seconds_after("soon") is None and seconds_after(None) is None


def test_url_and_key_default_to_the_environment(monkeypatch, new_client) -> None:
    monkeypatch.setenv("ZOLVE_URL", "http://zolve.example:8123/")
    monkeypatch.setenv("ZOLVE_API_KEY", "zk_from_env")
    for client in (new_client(), AsyncClient()):
        assert client.url == "http://zolve.example:8123"
        assert client._headers["Authorization"] == "Bearer zk_from_env"
    monkeypatch.delenv("ZOLVE_URL")
    monkeypatch.delenv("ZOLVE_API_KEY")
    assert new_client(key="zk_x").url == "http://127.0.0.1:8000"
    with pytest.raises(ValueError, match="ZOLVE_API_KEY"):
        Client()


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(cls).items()
        if callable(member) and not name.startswith("_") and name not in ("close", "aclose")
    }


def test_the_async_client_has_the_clients_methods_and_arguments() -> None:
    sync, asynchronous = _public(Client), _public(AsyncClient)
    assert sync.keys() == asynchronous.keys()
    for name, signature in sync.items():
        assert list(signature.parameters.values()) == list(asynchronous[name].parameters.values()), name


# -- a dropped answer -----------------------------------------------------------------------------------
@pytest.fixture
def dropping(live_api: ApiServer) -> Iterator[DroppingProxy]:
    proxy = DroppingProxy(int(live_api.url.rpartition(":")[2]))
    yield proxy
    proxy.close()


def _submitted_once(proxy: DroppingProxy, job: dict, key: str, live_api: ApiServer) -> None:
    assert proxy.dropped.is_set() and proxy.connections == 2, "the first answer was dropped, then retried"
    with Client(live_api.url, key) as direct:
        assert [found["id"] for found in direct.iter_jobs()] == [job["id"]], "one job for the key, not two"


def test_a_submit_whose_answer_is_dropped_is_retried_and_makes_one_job(
    dropping: DroppingProxy, live_api: ApiServer, worker, make_key
) -> None:
    key = make_key()["Authorization"].split()[1]
    with Client(dropping.url, key) as client:
        job = client.submit(DICE, {"dice": 3, "faces": 4}, fresh=True)
    _submitted_once(dropping, job, key, live_api)


def test_an_async_submit_whose_answer_is_dropped_is_retried_and_makes_one_job(
    dropping: DroppingProxy, live_api: ApiServer, worker, make_key
) -> None:
    key = make_key()["Authorization"].split()[1]

    async def submit() -> dict:
        async with AsyncClient(dropping.url, key) as client:
            return await client.submit(DICE, {"dice": 3, "faces": 4}, fresh=True)

    _submitted_once(dropping, run_on_own_loop(submit(), timeout=120), key, live_api)


# -- the async client against the stack -----------------------------------------------------------------
def test_the_async_client_submits_waits_lists_streams_and_batches(
    live_api: ApiServer, worker, make_key
) -> None:
    async def journey(client: AsyncClient) -> None:
        with pytest.raises(Invalid) as refused:
            await client.submit("dice", {"dice": 1})
        assert "dice" in refused.value.errors["params"]
        job = await client.submit(DICE, {"dice": 3, "faces": 4}, fresh=True)
        seen: list[str] = []
        done = await client.wait(job, timeout=60, on_update=lambda update: seen.append(update["state"]))
        assert done["state"] == seen[-1] == "succeeded"
        assert (await client.result(job))["optimal"] is True
        assert [found["id"] async for found in client.iter_jobs(page_size=1)] == [job["id"]]
        events = [event.event async for event in client.events(job)]
        assert events[0] == "created" and events[-1] == "succeeded"
        with pytest.raises(Conflict):
            await client.cancel(job)
        items = [{"client_id": f"d{faces}", "params": {"dice": 3, "faces": faces}} for faces in (3, 5)]
        batch = await client.submit_batch(DICE, items, idempotency_key=f"async-{uuid.uuid4()}")
        assert (await client.get_batch(batch["id"]))["item_count"] == 2
        got = [item["client_id"] async for item in client.iter_batch_items(batch["id"], page_size=1)]
        assert got == ["d3", "d5"]
        assert (await client.webhook_secret()).startswith("whsec_")

    async def run() -> None:
        async with AsyncClient(live_api.url, make_key()["Authorization"].split()[1]) as client:
            await journey(client)
        assert client._http_client is None, "closed on the way out"

    run_on_own_loop(run(), timeout=300)


def test_cancel_batch_stops_every_job_of_it(api: Client) -> None:
    import tests.plugins  # noqa: F401 - test.hold

    items = [{"client_id": f"h{n}", "params": {"seconds": 60, "release": f"c{n}"}} for n in range(3)]
    batch = api.submit_batch("test.hold", items)
    asked = api.cancel_batch(batch["id"])
    assert set(asked["counts"]) <= {"cancelled", "cancelling"}, asked["counts"]
    assert sum(asked["counts"].values()) == 3
