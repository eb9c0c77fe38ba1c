"""Hosts that lose power: every process in them killed at once (SIGKILL) and their link down. A worker
host mid-shard, and the API host (which then comes back)."""

from __future__ import annotations

import re
import threading
import time

import pytest
import requests

from puzzles.planetx.board import EMPTY, MODES
from puzzles.planetx.rules import enumerate_boards
from tests.multihost.cluster import Cluster, Http, owner_host, time_since
from tests.support import wait_until

pytestmark = pytest.mark.integration  # servers of its own, on hosts of its own (tests/multihost)

#: sector 1 and sector 18 empty: 85,959 expert boards, about half a minute on 2 cores
CORNER = [{"sector": 1, "object": "empty"}, {"sector": 18, "object": "empty"}]


@pytest.mark.timeout(300)
def test_worker_host_powered_off_mid_shard(cluster: Cluster) -> None:
    # shards of a few seconds (depth 3), so that one is under way when the power goes
    params = {"mode": "expert", "constraints": CORNER, "shard_depth": 3}
    job_id = cluster.submit({"kind": "planetx.enumerate", "params": params, "fresh": True})
    victim = cluster.worker_hosts[0]

    def victim_mid_shard() -> bool:
        running = [s for s in cluster.shards(job_id) if s.state == "running"]
        return (cluster.job(job_id).shards_done or 0) >= 1 and any(
            owner_host(s.lease_owner) == victim.role for s in running
        )

    for _ in range(3):
        wait_until(victim_mid_shard, 120, 0.05, "the victim host to run a shard")
        cluster.power_off(victim)
        off = time.monotonic()
        # what it held when it died (its last shard may have been stored just before)
        held = {
            s.id
            for s in cluster.shards(job_id)
            if s.state == "running" and owner_host(s.lease_owner) == victim.role
        }
        if held:
            break
        cluster.power_on(victim)  # and try again
        cluster.start_worker(victim)
    assert held, "the victim held no shard when it lost power"

    def taken_over() -> bool:
        shards = {s.id: s for s in cluster.shards(job_id)}
        return all(shards[i].attempts >= 2 and shards[i].state in ("running", "succeeded") for i in held)

    wait_until(taken_over, 60, 0.1, "the dead host's shards to run elsewhere")
    recovered_after = time_since(off)

    final = cluster.wait_job(job_id, 240)
    expected = len(enumerate_boards(MODES["expert"], [(1, EMPTY, True), (18, EMPTY, True)]))
    assert final.state == "succeeded", final.error
    assert final.result["count"] == expected == 85_959
    assert cluster.board_counts(job_id) == (expected, expected), "every board stored once"
    shards = {s.id: s for s in cluster.shards(job_id)}
    assert all(shards[i].state == "succeeded" and shards[i].attempts >= 2 for i in held)
    assert cluster.http.get("/ready").status == 200, "the two hosts left serve"
    print(
        f"\n{len(held)} shard(s) of the dead host running elsewhere {recovered_after} s after the power-off"
    )


@pytest.mark.timeout(300)
def test_api_host_restarted(cluster: Cluster) -> None:
    """Power off the API host while jobs run and a client long-polls: the workers go on; once it is back,
    every accepted job is there and finished, and an admin session made before still holds (the
    dashboard's sessions are signed with ZOLVE_SECRET_KEY, not a key of the dead process)."""
    _log_in(cluster)
    assert cluster.http.get("/admin/", allow_redirects=False).status == 200

    sharded = cluster.submit(
        {"kind": "test.sharded", "params": {"keys": list("abcdef"), "shard_seconds": 1.5}}
    )
    dice = [cluster.submit({"kind": "dice", "params": {"dice": 3, "faces": 4 + n}}) for n in range(5)]
    poll_failed = threading.Event()
    other_client = Http(cluster.network.client(cluster.client_host), cluster.http.base_url)

    def long_poll() -> None:
        try:  # a healthy API answers within 5 s, when the job is done
            other_client.get(f"/jobs/{sharded}?wait=25", headers=cluster.headers, timeout=15)
        except requests.RequestException:
            poll_failed.set()

    poller = threading.Thread(target=long_poll, daemon=True)
    poller.start()
    time.sleep(0.5)
    done_at_power_off = cluster.job(sharded).shards_done or 0
    cluster.power_off(cluster.api_host)
    off = time.monotonic()
    poller.join(30)
    assert poll_failed.is_set(), "the long-poll ended with the API host"
    with pytest.raises(requests.RequestException):
        cluster.http.get("/health", timeout=2)
    # the workers do not need the API
    wait_until(
        lambda: (cluster.job(sharded).shards_done or 0) > done_at_power_off, 30, 0.2, "shards to go on"
    )

    down_for = time_since(off)
    on = time.monotonic()
    cluster.power_on(cluster.api_host)
    cluster.start_api()
    back_after = time_since(on)
    assert cluster.http.get("/ready").status == 200
    for job_id in [sharded, *dice]:
        reply = cluster.http.get(f"/jobs/{job_id}?wait=25", headers=cluster.headers, timeout=40)
        assert reply.status == 200, reply.text
        assert reply.json()["state"] == "succeeded", reply.json()
    listed = cluster.http.get("/jobs?limit=50", headers=cluster.headers).json()["items"]
    assert {job["id"] for job in listed} >= {sharded, *dice}, "no accepted job lost"
    assert cluster.http.get("/admin/", allow_redirects=False).status == 200, "the session outlived the API"
    print(f"\nthe API host was off {down_for} s and answered {back_after} s after it was powered on")


def _log_in(cluster: Cluster) -> None:
    page = cluster.http.get("/admin/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    reply = cluster.http.post(
        "/admin/login", data={"key": cluster.api_key, "csrf_token": token}, allow_redirects=False
    )
    assert reply.status == 302 and "zolve_admin" in cluster.http.cookies(), reply.text
