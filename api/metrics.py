"""Prometheus metrics at /metrics (admin keys only): jobs by kind and state, shards by state, rows
written, job run times (from the counters PostgreSQL keeps per transition) and the broker's queue depth,
read from PostgreSQL and Redis at scrape time. With PostgreSQL away, the scrape still answers: its
figures go, `zolve_database_up` says 0, and the broker's and the edge's figures stay."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from flask import Response, request
from flask_smorest import abort
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from api.auth import auth
from api.bodies import Blueprint
from api.deps import caller
from api.extension import zolve
from core.waiting import EDGE_FIGURES
from services.reads import metrics
from workers.app import queue_depth

blp = Blueprint("metrics", __name__, description="Prometheus metrics")


class ZolveCollector:
    def __init__(self, read: Callable[[], metrics.Figures], celery: Any):
        self.read, self.celery = read, celery

    def collect(self) -> Iterator[Metric]:
        try:
            figures = self.read()
        except (DBAPIError, PoolTimeout):  # said as a figure: the scrape must not fail when it matters most
            figures = None
        yield GaugeMetricFamily(
            "zolve_database_up", "Whether this scrape could read PostgreSQL", value=int(figures is not None)
        )
        if figures is not None:
            yield from self._stored(figures)
        depth = queue_depth(self.celery)
        if depth is not None:
            yield GaugeMetricFamily(
                "zolve_queue_depth", "Wake-up messages waiting in the broker", value=depth
            )

    def _stored(self, figures: metrics.Figures) -> Iterator[Metric]:
        jobs, shards, rows = figures.jobs, figures.shards, figures.rows_written
        buckets, count, total = figures.run_seconds
        family = GaugeMetricFamily("zolve_jobs", "Jobs by kind and state", labels=["kind", "state"])
        for kind, state, n in jobs:
            family.add_metric([kind, state], n)
        yield family
        family = GaugeMetricFamily("zolve_shards", "Shards of sharded jobs by state", labels=["state"])
        for state, n in shards:
            family.add_metric([state], n)
        yield family
        yield CounterMetricFamily(
            "zolve_rows_written", "Rows (e.g. boards) stored by finished shards", value=rows
        )
        bounds = [str(b) for b in metrics.RUN_SECONDS_BUCKETS] + ["+Inf"]
        yield HistogramMetricFamily(
            "zolve_job_run_seconds",
            "Run time of finished jobs",
            buckets=list(zip(bounds, [*buckets, count], strict=True)),
            sum_value=total,
        )


def _registry() -> CollectorRegistry:
    extension = zolve()
    if extension.metrics is None:
        registry = CollectorRegistry()
        registry.register(ZolveCollector(partial(metrics.figures, extension.db), extension.celery))
        extension.metrics = registry
    return extension.metrics


@blp.route("/metrics")
@auth.login_required
@blp.doc(responses={"200": {"description": "Prometheus text format", "content": {"text/plain": {}}}})
@blp.alt_response(403, description="Not an admin key")
def metrics_page() -> Response:
    """Prometheus metrics (admin keys: scrape with `Authorization: Bearer <key>`)."""
    if not caller().is_admin:
        abort(403, message="metrics are for admin keys")
    text = generate_latest(_registry())
    figures = request.environ.get(EDGE_FIGURES)
    if figures is not None:  # this API process's edge (zolve api): its admissions, at this moment
        text += generate_latest(_EdgeFigures(figures()))
    return Response(text, content_type=CONTENT_TYPE_LATEST)


class _EdgeFigures(CollectorRegistry):
    """The edge's figures, as gauges of their own (a registry read once)."""

    def __init__(self, figures: list[tuple[str, str, float]]) -> None:
        super().__init__(auto_describe=False)
        self.figures = figures

    def collect(self) -> Iterator[Metric]:
        for name, about, value in self.figures:
            if name.endswith("_total"):
                yield CounterMetricFamily(name.removesuffix("_total"), about, value=value)
            else:
                yield GaugeMetricFamily(name, about, value=value)
