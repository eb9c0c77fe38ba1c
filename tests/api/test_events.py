"""Event streams (api/events.py) against the API under granian, the real worker, PostgreSQL and Redis:
every transition and shard count of a sharded job in order, a resumed stream that ends where an unbroken
one does, owner scoping, filters, and /health answering beside ten times as many streams and long-polls
as the server has threads."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import requests
from zolve_client import Event, parse_events

from tests.support import ApiServer, HeldJob, wait_until

#: a standard enumeration of a few thousand boards cut into a dozen shards or so: seconds on the worker
SHARDED = {"mode": "standard", "shard_depth": 2}
DICE = {"dice": 3, "faces": 3}


def _stream(url: str, headers: dict[str, str], last: int | None = None, **params) -> requests.Response:
    extra = {"Last-Event-ID": str(last)} if last is not None else {}
    return requests.get(url, headers={**headers, **extra}, params=params, stream=True, timeout=(5, 60))


def _events(response: requests.Response) -> Iterator[Event]:
    response.encoding = "utf-8"
    return parse_events(response.iter_lines(decode_unicode=True))


def _submit(server: ApiServer, headers: dict[str, str], kind: str, params: dict) -> str:
    body = {"kind": kind, "params": params, "fresh": True}
    answer = requests.post(f"{server.url}/jobs", json=body, headers=headers, timeout=10)
    assert answer.status_code == 202, answer.text
    return answer.json()["id"]


def test_a_sharded_jobs_stream_is_in_order_and_a_resumed_one_ends_the_same(
    live_api: ApiServer, worker, make_key: Callable[..., dict[str, str]]
) -> None:
    headers = make_key()
    job_id = _submit(live_api, headers, "planetx.enumerate", SHARDED)
    url = f"{live_api.url}/jobs/{job_id}/events"
    unbroken: list[Event] = []
    reader = threading.Thread(target=lambda: unbroken.extend(_events(_stream(url, headers))))
    reader.start()

    # another client drops its connection after the first shard's progress, and resumes after what it saw
    resumed: list[Event] = []
    with _stream(url, headers) as first:
        for event in _events(first):
            resumed.append(event)
            if event.event == "progress" and "shards_done" in event.data["detail"]:
                break
    resumed.extend(_events(_stream(url, headers, last=resumed[-1].id)))
    reader.join(60)

    assert [(e.id, e.event, e.data) for e in resumed] == [(e.id, e.event, e.data) for e in unbroken]
    names = [e.event for e in unbroken]
    assert names[0] == "created" and names[-1] == "succeeded" and names.count("succeeded") == 1
    assert names.index("running") < names.index("planned") < names.index("progress")
    assert [e.id for e in unbroken] == sorted({e.id for e in unbroken})
    shard_counts = [e.data["detail"] for e in unbroken if "shards_done" in (e.data["detail"] or {})]
    done = [c["shards_done"] for c in shard_counts]  # at most one every half second, and the last shard's
    assert done[0] >= 1 and done == sorted(set(done)), done
    job = requests.get(f"{live_api.url}/jobs/{job_id}", headers=headers, timeout=10).json()
    last = shard_counts[-1]
    assert last["shards_done"] == last["shards_total"] == job["progress"]["shards_total"]
    assert shard_counts[-1]["boards"] == job["result"]["count"]
    assert all(c["boards"] <= d["boards"] for c, d in zip(shard_counts, shard_counts[1:], strict=False))
    # a finished job's stream replays its history and ends; resumed after its end, it ends at once
    assert [e.id for e in _events(_stream(url, headers))] == [e.id for e in unbroken]
    assert list(_events(_stream(url, headers, last=unbroken[-1].id))) == []


def test_another_clients_job_has_no_stream_and_no_deliveries(
    live_api: ApiServer, make_key: Callable[..., dict[str, str]]
) -> None:
    owner, other = make_key(), make_key()
    job_id = requests.post(
        f"{live_api.url}/jobs", json={"kind": "dice", "params": DICE}, headers=owner, timeout=10
    ).json()["id"]
    with _stream(f"{live_api.url}/jobs/{job_id}/events", other) as refused:
        assert refused.status_code == 404
    deliveries = requests.get(f"{live_api.url}/jobs/{job_id}/deliveries", headers=other, timeout=10)
    assert deliveries.status_code == 404
    bad = _stream(f"{live_api.url}/jobs/{job_id}/events", owner, last="x")  # type: ignore[arg-type]
    assert bad.status_code == 422 and "Last-Event-ID" in bad.json()["errors"]
    typo = requests.get(f"{live_api.url}/jobs/{job_id}/events?last_event=3", headers=owner, timeout=10)
    assert typo.status_code == 422 and "last_event" in typo.json()["errors"], "not a replay from the start"


def test_a_clients_stream_shows_only_its_jobs_that_pass_the_filters(
    live_api: ApiServer, worker, make_key: Callable[..., dict[str, str]]
) -> None:
    mine, theirs = make_key(), make_key()
    got: list[Event] = []
    with _stream(f"{live_api.url}/events", mine, kind="dice", state="succeeded") as stream:
        expected = {_submit(live_api, mine, "dice", {"dice": 3, "faces": faces}) for faces in (3, 4)}
        _submit(live_api, theirs, "dice", {"dice": 3, "faces": 3})
        for event in _events(stream):
            got.append(event)
            if len(got) == 2:
                break
    assert {e.data["job_id"] for e in got} == expected and {e.event for e in got} == {"succeeded"}

    batch = requests.post(
        f"{live_api.url}/batches",
        json={"kind": "dice", "items": [{"client_id": "a", "params": {"dice": 3, "faces": 3}}]},
        headers=mine,
        timeout=10,
    ).json()
    batch_job = batch["items"][0]["job_id"]
    with _stream(f"{live_api.url}/events", mine, last=0, batch=batch["id"]) as stream:
        names = []
        for event in _events(stream):
            assert event.data["job_id"] == batch_job
            names.append(event.event)
            if event.event == "succeeded":
                break
    assert names[0] == "created" and names[-1] == "succeeded"


def test_a_stream_resumes_from_last_event_id_in_the_query_string(
    live_api: ApiServer, worker, make_key: Callable[..., dict[str, str]]
) -> None:
    """`?last_event_id=0` (as the README shows) reads a client's events from the start, like the header;
    a job's stream takes it too; anything but an event id is a 422 on the field."""
    headers = make_key()
    batch = requests.post(
        f"{live_api.url}/batches",
        json={"kind": "dice", "items": [{"client_id": "a", "params": DICE}]},
        headers=headers,
        timeout=10,
    ).json()
    job_id = batch["items"][0]["job_id"]
    with _stream(f"{live_api.url}/events", headers, last_event_id=0, batch=batch["id"]) as stream:
        assert stream.status_code == 200, stream.text
        seen: list[Event] = []
        for event in _events(stream):
            seen.append(event)
            if event.event == "succeeded":
                break
    assert seen[0].event == "created" and {e.data["job_id"] for e in seen} == {job_id}

    job_url = f"{live_api.url}/jobs/{job_id}/events"
    after_first = list(_events(_stream(job_url, headers, last_event_id=seen[0].id)))
    assert [e.id for e in after_first] == [e.id for e in seen[1:]]
    for url in (f"{live_api.url}/events", job_url):
        bad = _stream(url, headers, last_event_id="x")
        assert bad.status_code == 422 and "last_event_id" in bad.json()["errors"], bad.text


def test_streams_and_long_polls_ten_times_the_threads_hold_none_and_all_are_woken(
    live_api: ApiServer, db, make_key: Callable[..., dict[str, str]]
) -> None:
    """The server has 4 threads. 24 streams and 16 long-polls wait on one job, holding none of them
    (core.waiting): /health answers at once, another key submits and opens a stream, and when the job
    ends every long-poll answers and every stream sends the final event and ends."""
    job = HeldJob.make(db)
    url = f"{live_api.url}/jobs/{job.id}"
    log_before = live_api.log_path.stat().st_size
    streams = [_stream(f"{url}/events", job.headers) for _ in range(24)]
    with ThreadPoolExecutor(16) as pool:
        polls = [
            pool.submit(requests.get, f"{url}?wait=25", headers=job.headers, timeout=60) for _ in range(16)
        ]
        try:
            assert [stream.status_code for stream in streams] == [200] * 24
            admin = make_key(admin=True)
            edge_waiting = functools.partial(live_api.metric, "zolve_edge_waiting", admin)
            wait_until(lambda: edge_waiting() >= 40, 20, 0.1, "every stream and poll waiting")
            assert not any(poll.done() for poll in polls)
            for _ in range(10):  # one that found no thread would wait out a long-poll's 25 s: past 5 s
                assert requests.get(f"{live_api.url}/health", timeout=5).status_code == 200
            other = make_key()
            submitted = requests.post(
                f"{live_api.url}/jobs", json={"kind": "dice", "params": DICE}, headers=other, timeout=5
            )
            assert submitted.status_code == 202
            with _stream(f"{live_api.url}/events", other) as own:
                assert own.status_code == 200
            started = time.monotonic()
            job.cancel()
            states = [poll.result(timeout=20).json()["state"] for poll in polls]
            assert states == ["cancelled"] * 16 and time.monotonic() - started < 10
            for stream in streams:
                assert [event.event for event in _events(stream)][-1] == "cancelled"
            with live_api.log_path.open("rb") as log:
                log.seek(log_before)
                assert b"Traceback" not in log.read(), "a run asked to run again answers quietly"
        finally:
            for stream in streams:
                stream.close()
