"""`/ready` answers 200 only when jobs can run: the database and the broker answer and a worker has
heartbeated within a lease; otherwise 503 with the reasons."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import func, update

from store import heartbeats
from store.models import Worker
from tests.support import free_port


def test_health_reports_the_installed_version(client) -> None:
    from importlib.metadata import version

    health = client.get("/health")
    assert health.status_code == 200 and health.get_json() == {"status": "ok", "version": version("zolve")}


def test_ready_when_the_database_the_broker_and_a_worker_answer(client, worker) -> None:
    ready = client.get("/ready")
    assert ready.status_code == 200 and ready.get_json() == {"status": "ready"}


def test_not_ready_without_a_broker(make_app, worker) -> None:
    unready = make_app(redis_url=f"redis://127.0.0.1:{free_port()}/0").test_client().get("/ready")
    assert unready.status_code == 503 and unready.headers["Retry-After"]
    assert set(unready.get_json()["reasons"]) == {"broker"}
    assert "broker" in unready.get_json()["message"]


def test_not_ready_when_no_worker_has_heartbeated_within_a_lease(settings, isolated_db, make_app) -> None:
    app = make_app(database_url=isolated_db.url)
    never = app.test_client().get("/ready")
    assert never.status_code == 503 and never.get_json()["reasons"] == {
        "workers": "no worker has ever heartbeated"
    }

    with isolated_db.session() as session:
        heartbeats.beat(session, "gone-host", [1], "boot1")
        long_ago = func.now() - timedelta(seconds=settings.lease_seconds + 5)
        session.execute(update(Worker).values(heartbeat_at=long_ago))
    stale = app.test_client().get("/ready")
    assert stale.status_code == 503 and "heartbeated in the last" in stale.get_json()["reasons"]["workers"]

    with isolated_db.session() as session:
        heartbeats.beat(session, "live-host", [2], "boot2")
    assert app.test_client().get("/ready").status_code == 200
