"""Traces with OpenTelemetry, off unless OTEL_TRACES_EXPORTER names an exporter, and free when off: nothing
of OpenTelemetry is imported, no span is made.

Configured by OpenTelemetry's own variables: OTEL_TRACES_EXPORTER (`console`, `otlp`, or any exporter
installed under the `opentelemetry_traces_exporter` entry points, comma-separated; `none` or unset: off),
OTEL_EXPORTER_OTLP_ENDPOINT and the other OTLP variables (read by the exporter itself), OTEL_SERVICE_NAME
and OTEL_RESOURCE_ATTRIBUTES (read by the SDK's Resource), OTEL_TRACES_SAMPLER_ARG (the share of requests
traced; a job's spans follow its request's choice).

One trace per job. The API's request span (`POST /jobs`, `POST /batches`) is where a job's trace starts,
and the job's row keeps that span's context as a W3C `traceparent`; whichever process later sends its
message (the submit, another job's end, the sweeper) and whichever worker runs the job, its shards and its
finalize, their spans (`zolve.queued`, `zolve.run`, `zolve.shard`, `zolve.finalize`, and the SQL under
them) join that trace through the row, not through the message.

Each process sets up its own provider after any fork (the API's in each of granian's workers, a Celery
worker's in each pool process) and flushes it when that process ends: the batch processor's spans would
otherwise die with a recycled pool process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from datetime import datetime
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.sdk.trace.sampling import Sampler
    from opentelemetry.trace import Span

EXPORTERS_VARIABLE = "OTEL_TRACES_EXPORTER"
SAMPLER_ARG_VARIABLE = "OTEL_TRACES_SAMPLER_ARG"
#: the entry point group OpenTelemetry's exporters register under
EXPORTER_GROUP = "opentelemetry_traces_exporter"
#: `otlp` is OTLP over HTTP (protobuf), the exporter zolve ships
ALIASES = {"otlp": "otlp_proto_http"}
TRACER_NAME = "zolve"

_provider: TracerProvider | None = None


def exporter_names(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The exporters OTEL_TRACES_EXPORTER names (empty: tracing is off)."""
    names = [name.strip() for name in environ.get(EXPORTERS_VARIABLE, "").split(",")]
    return [ALIASES.get(name, name) for name in names if name and name != "none"]


def check_exporters(environ: Mapping[str, str] = os.environ) -> None:
    """ValueError naming the variable when it names an exporter that is not installed (or when the
    sampling ratio is not one)."""
    names = exporter_names(environ)
    if not names:
        return
    sample_ratio(environ)
    known = {point.name for point in entry_points(group=EXPORTER_GROUP)}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(
            f"{EXPORTERS_VARIABLE}: no such exporter {', '.join(unknown)} "
            f"(one of: {', '.join(sorted(known | set(ALIASES)))}, or none)"
        )


def start(service_name: str, exporters: list[SpanExporter] | None = None) -> TracerProvider | None:
    """This process's tracer provider, made once (None: tracing is off). `exporters`: these instead of
    the ones OTEL_TRACES_EXPORTER names (the tests' in-memory one)."""
    global _provider
    if _provider is not None:
        return _provider
    if exporters is None:
        if not exporter_names():
            return None
        check_exporters()
        exporters = [_exporter(name) for name in exporter_names()]
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    provider = TracerProvider(resource=Resource.create(named), sampler=_sampler())
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    _provider = provider
    return provider


def _sampler() -> Sampler:
    """Every span of a trace that a request or a job began, for OTEL_TRACES_SAMPLER_ARG of the requests
    (a ratio, 1 by default: all); none of a trace that an outgoing call would begin on its own (the SQL of a
    heartbeat or a sweep, outside any request or job: a trace a statement)."""
    from opentelemetry.sdk.trace.sampling import (
        Decision,
        ParentBased,
        Sampler,
        SamplingResult,
        TraceIdRatioBased,
    )
    from opentelemetry.trace import SpanKind

    ratio = TraceIdRatioBased(sample_ratio())

    class RequestsNotLoneCalls(Sampler):
        def should_sample(
            self, parent_context: Any, trace_id: int, name: str, kind: Any = None, *args: Any, **kwargs: Any
        ) -> SamplingResult:
            if kind == SpanKind.CLIENT:
                return SamplingResult(Decision.DROP)
            return ratio.should_sample(parent_context, trace_id, name, kind, *args, **kwargs)

        def get_description(self) -> str:
            return f"RequestsNotLoneCalls({ratio.rate})"

    return ParentBased(root=RequestsNotLoneCalls())


def sample_ratio(environ: Mapping[str, str] = os.environ) -> float:
    """OTEL_TRACES_SAMPLER_ARG: the share of requests whose trace is kept (0 to 1; default 1)."""
    text = environ.get(SAMPLER_ARG_VARIABLE, "").strip()
    try:
        ratio = float(text) if text else 1.0
    except ValueError:
        raise ValueError(f"{SAMPLER_ARG_VARIABLE}: not a number: {text[:20]!r}") from None
    if not 0.0 <= ratio <= 1.0:
        raise ValueError(f"{SAMPLER_ARG_VARIABLE}: must be from 0 to 1, not {text[:20]}")
    return ratio


def stop() -> None:
    """Flush and end this process's provider (a pool process about to exit)."""
    global _provider
    if _provider is not None:
        _provider.shutdown()
        _provider = None


def active() -> bool:
    return _provider is not None


def _exporter(name: str) -> SpanExporter:
    """The named exporter, made as its entry point makes it; but `console` writes a span a line (JSON) to
    the process's own standard output: a Celery pool process's sys.stdout is a logger, which would
    prefix each line of an indented span."""
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter

        def one_line(span: ReadableSpan) -> str:
            return str(span.to_json(indent=None)) + "\n"

        return ConsoleSpanExporter(out=sys.__stdout__ or sys.stdout, formatter=one_line)
    (point,) = entry_points(group=EXPORTER_GROUP, name=name)
    exporter: SpanExporter = point.load()()
    return exporter


def current_traceparent() -> str | None:
    """The current span's context as a W3C traceparent (None: tracing is off or no span is current): what
    a new job's row keeps."""
    if _provider is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


def trace_id(traceparent: str | None) -> str | None:
    """The trace id a traceparent carries (`00-<trace id>-<span id>-<flags>`)."""
    parts = (traceparent or "").split("-")
    return parts[1] if len(parts) == 4 and len(parts[1]) == 32 else None


@contextmanager
def job_span(
    name: str, traceparent: str | None, attributes: dict[str, Any] | None = None, *, sql: bool = True
) -> Iterator[Span | None]:
    """A span of a job's work, in the job's trace (its row's traceparent), current while the block runs
    (the SQL under it joins it; `sql=False`: its statements make no spans, for work done thousands of
    times a job, a shard's). Nothing when tracing is off or the job has no trace."""
    if _provider is None or traceparent is None:
        with nullcontext():
            yield None
        return
    from opentelemetry.instrumentation.utils import suppress_instrumentation
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    tracer = _provider.get_tracer(TRACER_NAME)
    quiet = nullcontext() if sql else suppress_instrumentation()
    with tracer.start_as_current_span(name, context=parent, attributes=attributes) as span, quiet:
        yield span


def past_span(
    name: str, traceparent: str | None, start: datetime, end: datetime, attributes: dict[str, Any]
) -> None:
    """A span of the job's trace over a time already past (how long its message waited to be taken)."""
    if _provider is None or traceparent is None:
        return
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = TraceContextTextMapPropagator().extract({"traceparent": traceparent})
    tracer = _provider.get_tracer(TRACER_NAME)
    span = tracer.start_span(name, context=parent, start_time=_nanoseconds(start), attributes=attributes)
    span.end(end_time=_nanoseconds(end))


def _nanoseconds(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def instrument_flask(app: Any, provider: TracerProvider) -> None:
    """A server span for each request the app serves (the route as its name)."""
    from opentelemetry.instrumentation.flask import FlaskInstrumentor

    instrument_app: Any = FlaskInstrumentor.instrument_app  # untyped in the package
    instrument_app(app, tracer_provider=provider, excluded_urls="health,ready,metrics")


def instrument_engine(engine: Any) -> None:
    """While this process traces, a span for each SQL statement the engine's connections run (psycopg's
    instrumentation, on each connection the engine opens), under whatever span is current."""
    if _provider is None:
        return
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from sqlalchemy import event

    provider = _provider

    def traced(connection: Any, _record: Any) -> None:
        PsycopgInstrumentor.instrument_connection(connection, tracer_provider=provider)

    event.listen(engine, "connect", traced)
