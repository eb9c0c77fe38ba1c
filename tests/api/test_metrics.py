"""Prometheus metrics: admin keys only, figures read from PostgreSQL."""

import pytest
from flask import Flask
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import make_url, text

from store import jobs as job_store
from store import keys
from store.db import Database


def test_metrics_need_an_admin_key(client, make_key) -> None:
    assert client.get("/metrics").status_code == 401
    refused = client.get("/metrics", headers=make_key())
    assert refused.status_code == 403 and refused.get_json()["code"] == 403


@pytest.fixture
def isolated_app(isolated_db: Database, make_app) -> Flask:
    """The app on a database of its own: its figures count only this test's jobs (the shared database
    holds every other test's, and the shared worker finishes them at any time)."""
    return make_app(database_url=isolated_db.url)


def test_metrics_count_jobs_by_kind_and_state(isolated_app, isolated_db: Database) -> None:
    client = isolated_app.test_client()
    with isolated_db.session() as session:
        admin = {"Authorization": f"Bearer {keys.create_key(session, name='admin', is_admin=True).key}"}
        alice = keys.create_key(session, name="alice").id

    def jobs_gauge() -> dict[tuple[str, str], float]:
        page = client.get("/metrics", headers=admin)
        assert page.status_code == 200 and page.mimetype == "text/plain"
        assert page.headers["Content-Type"].count("charset") == 1, page.headers["Content-Type"]
        families = {f.name: f for f in text_string_to_metric_families(page.get_data(as_text=True))}
        assert {"zolve_jobs", "zolve_shards", "zolve_rows_written", "zolve_job_run_seconds"} <= set(families)
        return {(s.labels["kind"], s.labels["state"]): s.value for s in families["zolve_jobs"].samples}

    before = jobs_gauge().get(("dice", "succeeded"), 0)
    # no worker looks at this database: the job is run by hand, through the transitions a worker makes
    with isolated_db.session() as session:
        job, _ = job_store.create_job(
            session, owner_id=alice, kind="dice", params={"dice": 3, "faces": 4}, time_limit=60
        )
    with isolated_db.session() as session:
        assert job_store.claim(session, job.id, "worker:1", 30) is not None
        assert job_store.finish(session, job.id, "worker:1", state="succeeded", result={"wins": 10})
    assert jobs_gauge()[("dice", "succeeded")] == before + 1
    assert jobs_gauge() == {("dice", "succeeded"): 1}, "only this test's job is counted"


def test_the_api_process_reports_its_admissions_under_the_edge(live_api, make_key) -> None:
    """Under `zolve api` the scrape adds what the answering process's edge admits and refuses."""
    import requests

    answer = requests.get(f"{live_api.url}/metrics", headers=make_key(admin=True), timeout=10)
    assert answer.status_code == 200
    samples = {
        sample.name: sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
    }
    assert samples["zolve_edge_requests_in_progress"] >= 1  # this scrape itself
    assert samples["zolve_edge_requests_limit"] == 8000
    assert {"zolve_edge_waiting", "zolve_edge_refused_address_total", "zolve_edge_addresses"} <= set(samples)


def test_a_scrape_while_the_database_is_away_says_so_in_a_figure(
    isolated_app, isolated_db: Database, db
) -> None:
    """Before, /metrics answered 503 for the whole outage, so Prometheus saw the target down instead of
    the database (the resilience audit)."""
    client = isolated_app.test_client()
    with isolated_db.session() as session:
        admin = {"Authorization": f"Bearer {keys.create_key(session, name='admin', is_admin=True).key}"}

    def families() -> dict[str, list]:
        page = client.get("/metrics", headers=admin)
        assert page.status_code == 200, page.get_data(as_text=True)[:300]
        return {f.name: f.samples for f in text_string_to_metric_families(page.get_data(as_text=True))}

    up = families()  # the key is now verified for a while: the scrape needs no lookup
    assert up["zolve_database_up"][0].value == 1 and "zolve_jobs" in up
    name = make_url(isolated_db.url).database
    with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as admin_connection:
        admin_connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false'))
        try:
            admin_connection.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :name"),
                {"name": name},
            )
            away = families()
        finally:
            admin_connection.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true'))
    assert away["zolve_database_up"][0].value == 0 and "zolve_jobs" not in away, away.keys()
