"""Prometheus metrics: admin keys only, figures read from PostgreSQL."""

from prometheus_client.parser import text_string_to_metric_families


def test_metrics_need_an_admin_key(client, make_key) -> None:  # noqa: ANN001
    assert client.get("/metrics").status_code == 401
    refused = client.get("/metrics", headers=make_key())
    assert refused.status_code == 403 and refused.get_json()["code"] == 403


def test_metrics_count_jobs_by_kind_and_state(client, make_key, worker, wait_job) -> None:  # noqa: ANN001
    admin, alice = make_key(admin=True), make_key()

    def jobs_gauge() -> dict[tuple[str, str], float]:
        page = client.get("/metrics", headers=admin)
        assert page.status_code == 200 and page.mimetype == "text/plain"
        families = {f.name: f for f in text_string_to_metric_families(page.get_data(as_text=True))}
        assert {"zolve_jobs", "zolve_shards", "zolve_rows_written", "zolve_job_run_seconds"} <= set(families)
        return {(s.labels["kind"], s.labels["state"]): s.value for s in families["zolve_jobs"].samples}

    before = jobs_gauge().get(("dice", "succeeded"), 0)
    job = client.post("/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4}}, headers=alice)
    assert wait_job(alice, job.get_json()["id"])["state"] == "succeeded"
    assert jobs_gauge()[("dice", "succeeded")] == before + 1
