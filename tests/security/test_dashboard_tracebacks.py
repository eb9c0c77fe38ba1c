"""Issue 37, item 8: a job's traceback (server paths included) is for admin keys only, on the dashboard as
on the API."""

from __future__ import annotations

import uuid

from sqlalchemy import update

from store import jobs as job_store
from store import keys
from store.models import Job
from tests.security.helpers import bearer_token, signed_in

TRACEBACK = 'Traceback (most recent call last):\n  File "/srv/zolve/secret_module.py", line 7, in solve'


def _failed_job(db, headers: dict[str, str]) -> str:
    with db.session() as session:
        owner = keys.authenticate(session, bearer_token(headers)).id
        job, _ = job_store.create_job(
            session, owner_id=owner, kind="dice", params={"dice": 3, "faces": 6}, time_limit=10
        )
        error = {"type": "ValueError", "message": "bad faces", "traceback": TRACEBACK}
        session.execute(update(Job).where(Job.id == job.id).values(state="failed", error=error))
        return str(job.id)


def test_a_client_key_sees_the_error_but_not_the_traceback(app, db, make_key) -> None:
    owner = make_key()
    job_id = _failed_job(db, owner)
    html = signed_in(app, owner).get(f"/admin/jobs/{job_id}").get_data(as_text=True)
    assert "bad faces" in html
    assert "Traceback" not in html and "secret_module" not in html


def test_an_admin_key_sees_the_traceback(app, db, make_key) -> None:
    job_id = _failed_job(db, make_key())
    html = signed_in(app, make_key(admin=True)).get(f"/admin/jobs/{job_id}").get_data(as_text=True)
    assert "bad faces" in html and "secret_module.py" in html


def test_the_api_hides_it_from_the_client_too(client, db, make_key) -> None:
    owner = make_key()
    job_id = _failed_job(db, owner)
    error = client.get(f"/jobs/{uuid.UUID(job_id)}", headers=owner).get_json()["error"]
    assert error == {"type": "ValueError", "message": "bad faces"}
