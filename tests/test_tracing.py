"""Tracing (core.tracing) against a stack of its own: the API in this process with an in-memory exporter,
the worker a real process of the installed product with OTEL_TRACES_EXPORTER=console; one trace per job,
from its `POST /jobs` span to its worker's run span and the SQL under it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core import tracing
from tests.support import poll_job, private_stack, wait_until

#: the worker's batches of spans go out every 0.1 s instead of 5 (OpenTelemetry's own variable)
WORKER_ENV = {"OTEL_TRACES_EXPORTER": "console", "OTEL_BSP_SCHEDULE_DELAY": "100"}


def test_tracing_is_off_unless_an_exporter_is_named_and_a_wrong_name_names_the_variable() -> None:
    assert tracing.exporter_names({}) == [] and tracing.exporter_names({"OTEL_TRACES_EXPORTER": "none"}) == []
    assert tracing.exporter_names({"OTEL_TRACES_EXPORTER": "otlp, console"}) == ["otlp_proto_http", "console"]
    tracing.check_exporters({"OTEL_TRACES_EXPORTER": "otlp,console"})
    with pytest.raises(ValueError, match="OTEL_TRACES_EXPORTER: no such exporter jaeger"):
        tracing.check_exporters({"OTEL_TRACES_EXPORTER": "jaeger"})
    assert tracing.sample_ratio({}) == 1.0 and tracing.sample_ratio({"OTEL_TRACES_SAMPLER_ARG": "0.1"}) == 0.1
    for bad in ("2", "ten"):
        with pytest.raises(ValueError, match="OTEL_TRACES_SAMPLER_ARG"):
            tracing.check_exporters({"OTEL_TRACES_EXPORTER": "console", "OTEL_TRACES_SAMPLER_ARG": bad})
    assert tracing.trace_id("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01") == (
        "0af7651916cd43dd8448eb211c80319c"
    )
    assert tracing.trace_id(None) is None and tracing.trace_id("garbage") is None
    assert not tracing.active() and tracing.current_traceparent() is None
    with tracing.job_span("zolve.run", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01") as span:
        assert span is None, "off: no span"


@pytest.fixture
def api_spans() -> Iterator[InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    tracing.start("zolve-api", exporters=[memory])
    try:
        yield memory
    finally:
        tracing.stop()


def worker_spans(log: Path) -> list[dict[str, Any]]:
    """The spans the worker's console exporter wrote, a JSON object a line, among its log lines."""
    spans = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith('{"name": '):
            spans.append(json.loads(line))
    return spans


def test_a_jobs_trace_runs_from_its_submit_to_its_workers_run_and_shards(
    settings, tmp_path: Path, api_spans: InMemorySpanExporter
) -> None:
    with private_stack(settings, tmp_path / "stack", env=WORKER_ENV) as stack:
        stack.worker.start()
        admin_headers = _admin(stack)
        dice = stack.client.post(
            "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4}}, headers=admin_headers
        )
        sharded_body = {"kind": "test.sharded", "params": {"keys": ["a", "b"]}}
        sharded = stack.client.post("/jobs", json=sharded_body, headers=admin_headers)
        ids = {"dice": dice.get_json()["id"], "sharded": sharded.get_json()["id"]}
        jobs = {name: poll_job(stack.client, admin_headers, job_id, 60) for name, job_id in ids.items()}
        assert {job["state"] for job in jobs.values()} == {"succeeded"}

        def finalized() -> list[dict[str, Any]] | None:
            spans = worker_spans(stack.worker.log_path)
            return spans if any(span["name"] == "zolve.finalize" for span in spans) else None

        spans = wait_until(finalized, 30, 0.2, "the worker's spans")

    provider = tracing.start("zolve-api")
    assert provider is not None and provider.force_flush()
    submits = [span for span in api_spans.get_finished_spans() if span.name == "POST /jobs"]
    assert len(submits) == 2
    by_trace = {format(span.context.trace_id, "032x"): span for span in submits}
    for name, job in jobs.items():
        assert job["trace_id"] in by_trace, "an admin sees the job's trace id"
        submit = by_trace[job["trace_id"]]
        mine = [span for span in spans if span["context"]["trace_id"] == "0x" + job["trace_id"]]
        expected = {
            "dice": {"zolve.queued", "zolve.run"},
            "sharded": {"zolve.queued", "zolve.run", "zolve.shard", "zolve.finalize"},
        }[name]
        assert expected <= {span["name"] for span in mine}, (name, [span["name"] for span in mine])
        submit_id = "0x" + format(submit.context.span_id, "016x")
        for span in mine:
            if span["name"].startswith("zolve."):
                assert span["parent_id"] == submit_id, span
                assert span["attributes"]["zolve.job_id"] == ids[name]
        run = next(span for span in mine if span["name"] == "zolve.run")
        sql = [span for span in mine if span["parent_id"] == run["context"]["span_id"]]
        assert sql and all("db.statement" in span["attributes"] for span in sql), "the run's SQL is under it"
    lone = [span["name"] for span in spans if span["parent_id"] is None]
    assert lone == [], "the SQL of heartbeats and sweeps, outside any job, makes no trace of its own"
    shard_spans = [span for span in spans if span["name"] == "zolve.shard"]
    assert {span["attributes"]["zolve.shard_key"] for span in shard_spans} >= {"a", "b"}
    shard_ids = {span["context"]["span_id"] for span in shard_spans}
    under_shards = [span for span in spans if span["parent_id"] in shard_ids]
    assert under_shards == [], "a shard's statements make no spans"


def _admin(stack: Any) -> dict[str, str]:
    from store import keys

    with stack.db.session() as session:
        return {"Authorization": f"Bearer {keys.create_key(session, name='admin', is_admin=True).key}"}


def test_an_exporter_that_is_not_installed_is_refused_with_the_settings(monkeypatch) -> None:
    from core.config import Settings, SettingsError

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console,jaeger")
    with pytest.raises(SettingsError, match="OTEL_TRACES_EXPORTER: no such exporter jaeger"):
        Settings.from_env()
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert Settings.from_env() is not None
