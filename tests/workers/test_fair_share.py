"""Clients sharing the workers (real worker processes): a short job does not wait for another client's
bulk job, and two bulk jobs progress side by side instead of one after the other."""

from __future__ import annotations

import threading

from sqlalchemy import func, select
from werkzeug.serving import make_server
from zolve_client import Client

from store.models import Job, Shard
from tests.support import shard_states, wait_until

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}}


def bulk(shards: int, seconds: float) -> dict:
    keys = [f"k{n:02}" for n in range(shards)]
    return {"kind": "test.sharded", "params": {"keys": keys, "shard_seconds": seconds}}


def test_a_short_job_runs_beside_another_clients_bulk_job(client, make_key, worker, wait_job, db) -> None:
    a, b = make_key(), make_key()
    # 18 s of shards on two processes: room for a loaded machine's slow dispatch before the last one starts
    bulk_id = client.post("/jobs", json=bulk(20, 1.8), headers=a).get_json()["id"]
    wait_until(  # planned: its shards fill both worker processes, and more wait in the queue
        lambda: (states := shard_states(db, bulk_id)).get("running") == 2 and states.get("queued", 0) > 2,
        30,
        what="the bulk job's shards running on both processes",
    )
    short_id = client.post("/jobs", json=DICE, headers=b).get_json()["id"]
    assert wait_job(b, short_id, 120)["state"] == "succeeded"
    with db.session() as session:
        assert session.get(Job, bulk_id).state == "running", "the bulk job was still running beside it"
    assert wait_job(a, bulk_id, 60)["state"] == "succeeded"
    with db.session() as session:
        short_started = session.get(Job, short_id).started_at
        later = session.scalar(
            select(func.count()).where(Shard.job_id == bulk_id, Shard.started_at > short_started)
        )
    # the short job takes the first place a shard frees: most of the bulk job's shards start after it
    assert later >= 10, f"only {later} of the bulk job's 20 shards started after the short job"


def test_two_bulk_clients_progress_side_by_side(client, make_key, worker, wait_job, db) -> None:
    first, second = make_key(), make_key()
    # both sent before the worker takes either: the first one's shards cannot all be under way before
    # the second one is planned, however slowly a loaded machine plans it
    with worker.stopped():
        ids = [
            client.post("/jobs", json=bulk(8, 1.0), headers=headers).get_json()["id"]
            for headers in (first, second)
        ]
    done = [wait_job(headers, job_id, 90) for headers, job_id in zip((first, second), ids, strict=True)]
    assert [job["state"] for job in done] == ["succeeded", "succeeded"]
    with db.session() as session:
        first_finished = session.get(Job, ids[0]).finished_at
        second_began = session.scalar(select(func.min(Shard.started_at)).where(Shard.job_id == ids[1]))
        second_shards_before = session.scalar(
            select(func.count()).where(Shard.job_id == ids[1], Shard.finished_at < first_finished)
        )
    assert second_began < first_finished, "the second client did not wait for the first one's whole job"
    assert second_shards_before >= 2, "the second client's shards ran while the first one's did"


def test_a_large_result_is_paged_instead_of_returned_whole(settings, tmp_path) -> None:
    from tests.support import poll_job, private_stack

    body = {"kind": "mastermind.play", "params": {"n": 3, "k": 4, "secrets": {"sample": 40, "seed": 3}}}
    with private_stack(settings, tmp_path / "stack", env={"ZOLVE_MAX_RESULT_BYTES": "2000"}) as stack:
        stack.worker.start()
        job_id = stack.client.post("/jobs", json=body, headers=stack.headers).get_json()["id"]
        job = poll_job(stack.client, stack.headers, job_id, 120)
        assert job["state"] == "succeeded", job
        assert job["result"]["games"] is None and job["result"]["paged"] == {"field": "games", "count": 40}
        assert job["result"]["games_count"] == 40, "the rest of the result is whole"
        games, url = [], job["links"]["result_items"] + "?limit=15"
        while url:
            page = stack.client.get(url, headers=stack.headers).get_json()
            games += page["items"]
            url = (
                page["next_cursor"] is not None
                and f"{job['links']['result_items']}?limit=15&cursor={page['next_cursor']}"
            )
        assert [game["index"] for game in games] == list(range(40))
        server = make_server("127.0.0.1", 0, stack.client.application, threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            api = Client(f"http://127.0.0.1:{server.server_port}", stack.headers["Authorization"].split()[1])
            assert list(api.iter_result_items(job_id, page_size=1)) == games, "a page of one: cursor 0 too"
            assert list(api.iter_result_items(job_id, page_size=16)) == games
        finally:
            server.shutdown()
            server.server_close()
        small = stack.client.get(f"/jobs/{job_id}", headers=stack.headers)
        assert len(small.get_data()) < 4000, "the job itself stays small"
