"""Retrying a failed job that stored many rows: the request only re-queues it; its old rows go in chunks
on a worker (the same chunked path retention uses), never in one statement under the API's statement
timeout."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select, text

from store import rows
from store.models import Row
from tests.support import wait_until

OLD_ROWS = 1_000_000


def test_a_retry_of_a_job_with_many_rows_answers_at_once_and_its_rows_go_on_a_worker(
    make_app, db, client, make_key, worker, wait_job
) -> None:
    owner, admin = make_key(), make_key(admin=True)
    body = {"kind": "test.sharded", "params": {"keys": ["a"], "finalize": "unstorable"}, "fresh": True}
    job_id = client.post("/jobs", json=body, headers=owner).get_json()["id"]
    assert wait_job(owner, job_id)["state"] == "failed"
    with db.session() as session:  # an enumeration's worth of stored rows from the failed run
        session.execute(
            text("INSERT INTO rows (job_id, key) SELECT :job, g FROM generate_series(1, :n) g"),
            {"job": job_id, "n": OLD_ROWS},
        )
    # an API whose statements must end within 0.25 s: deleting the rows in one go took about 1 s here
    strict = make_app(api_statement_timeout=0.25)
    answer = strict.test_client().post(f"/admin/jobs/{job_id}/retry", headers=admin)
    assert answer.status_code == 302, answer.get_data(as_text=True)[:300]

    def old_rows() -> int:
        with db.session() as session:
            query = select(func.count()).where(Row.job_id == uuid.UUID(job_id), Row.key <= OLD_ROWS)
            return session.scalar(query)

    wait_until(lambda: old_rows() == 0, 60, 0.5, "the old rows to be deleted")
    assert wait_job(owner, job_id)["state"] == "failed", "the rerun fails again the same way"
    with db.session() as session:
        codes = rows.keys_stored(session, uuid.UUID(job_id)).tolist()
        left = session.scalar(select(func.count()).where(Row.job_id == uuid.UUID(job_id)))
    assert left == 0 and len(codes) == 1 and codes[0] > OLD_ROWS, "only the rerun's own key is left"
