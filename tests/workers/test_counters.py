"""The counters behind /metrics and the dashboard (store.tallies) after a mixed run by a real worker, on a
stack of its own: jobs that succeed, fail, crash their worker until they are given up, get cancelled while
queued or running, are retried by an operator, and a purge. Every figure equals COUNT(*) over the rows."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import update

from services import retention
from store import keys
from store.models import Job
from tests.store.tally_truth import assert_counters_match
from tests.support import poll_job, private_stack, wait_until

DICE = {"kind": "dice", "params": {"dice": 3, "faces": 4}}
SLOW = {"kind": "test.sharded", "params": {"keys": ["a", "b", "c", "d"], "shard_seconds": 2}}
FAILS = {"kind": "test.sharded", "params": {"keys": ["a"], "finalize": "unstorable"}}
CRASH = {"kind": "test.crash", "params": {}}


def test_the_counters_equal_the_rows_after_a_mixed_run(settings, tmp_path: Path) -> None:
    with private_stack(settings, tmp_path / "stack", concurrency=2) as stack:
        client, headers = stack.client, stack.headers
        with stack.db.session() as session:
            admin = {"Authorization": f"Bearer {keys.create_key(session, name='admin', is_admin=True).key}"}

        def submit(body: dict) -> str:
            response = client.post("/jobs", json=body, headers=headers)
            assert response.status_code == 202, response.get_json()
            return response.get_json()["id"]

        def state(job_id: str) -> str:
            return client.get(f"/jobs/{job_id}?wait=1", headers=headers).get_json()["state"]

        queued = submit(DICE)  # no worker yet: cancelled while queued
        assert client.post(f"/jobs/{queued}/cancel", headers=headers).get_json()["state"] == "cancelled"
        stack.worker.start()
        done = [submit(DICE) for _ in range(3)]
        failed, crashed, slow = submit(FAILS), submit(CRASH), submit(SLOW)
        wait_until(lambda: state(slow) == "running", 30, what="the slow job to run")
        client.post(f"/jobs/{slow}/cancel", headers=headers)
        for job_id in [*done, failed, slow]:
            poll_job(client, headers, job_id, 60)
        # the crash job is given up after max_attempts (its worker process dies each time)
        assert poll_job(client, headers, crashed, 90)["state"] == "failed"
        # the sweeps that requeued and then failed it name it in the worker's log (written after the commit)
        given_up = f"sweep: failed (worker lost too often): {crashed}"
        wait_until(lambda: stack.worker.log_count(given_up) == 1, 10, what="the sweep's log line")
        assert stack.worker.log_count(f"sweep: requeued or re-sent: {crashed}") >= 1
        assert_counters_match(stack.db)

        # an operator's retry: the failed job runs (and fails) again
        retried = client.post(f"/admin/jobs/{failed}/retry", headers=admin)
        assert retried.status_code == 302
        wait_until(lambda: stack.job(failed).attempts >= 1 and state(failed) == "failed", 60)
        assert_counters_match(stack.db)

        # a purge: two of the finished jobs are made old
        with stack.db.session() as session:
            session.execute(
                update(Job)
                .where(Job.id.in_([stack.job(done[0]).id, stack.job(slow).id]))
                .values(finished_at=Job.finished_at - timedelta(days=40))
            )
        assert retention.purge(stack.db, timedelta(days=30)).jobs == 2
        truth = assert_counters_match(stack.db)
        assert {state for _, state, _ in truth.jobs} >= {"succeeded", "failed", "cancelled"}

        # /metrics shows the same figures
        page = client.get("/metrics", headers=admin).get_data(as_text=True)
        families = {family.name: family for family in text_string_to_metric_families(page)}
        shown = sorted(
            (sample.labels["kind"], sample.labels["state"], int(sample.value))
            for sample in families["zolve_jobs"].samples
        )
        assert shown == truth.jobs
