"""How the dashboard shows things: progress, result previews, the per-minute chart, a job's timeline.
Pure functions of read models (services.reads), so the views stay thin and the templates simple."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from zolve_client.wire import Progress

from core.states import JobState
from kinds import KINDS
from kinds.base import ResultTable
from services.reads.dashboard import Minute
from services.reads.events import EventView
from services.reads.jobs import JobView
from services.resources import progress_of


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str)


def progress_percent(job: JobView) -> int | None:
    """0-100 when the job's progress can be measured; None draws an indeterminate bar while the job runs
    (a finished one's state says it all)."""
    if job.state == JobState.SUCCEEDED:
        return 100
    if job.shards_total:
        return int(100 * job.shards_done / job.shards_total)
    return Progress.from_json(job.progress).percent()


def progress_label(job: JobView) -> str:
    """The job's progress in a line, as the API tells it (a finished job's has no `phase`)."""
    if job.shards_total:
        shards = f"{job.shards_done}/{job.shards_total} shards"
        kind = KINDS.get(job.kind)
        counted = kind.counted_rows if kind else "rows"
        return f"{shards}, {job.rows_done:,} {counted}" if counted else shards
    progress = progress_of(job) or {}
    return ", ".join(f"{k}: {v}" for k, v in progress.items() if isinstance(v, str | int | float))[:120]


# -- result previews ------------------------------------------------------------------------------
def result_tables(kind_name: str, result: dict[str, Any] | None) -> list[ResultTable]:
    """The tables the job's kind makes of its result; [] means the pretty JSON alone."""
    kind = KINDS.get(kind_name)
    if kind is None or kind.result_tables is None or not isinstance(result, dict):
        return []
    return kind.result_tables(result)


def field_errors(errors: Any, path: str = "") -> list[tuple[str, str]]:
    """marshmallow's nested messages as (dotted field path, message) pairs, e.g.
    {"params": {"observations": {"0": {"count": ["…"]}}}} → [("params.observations.0.count", "…")]."""
    if isinstance(errors, dict):
        return [
            pair
            for name, inner in errors.items()
            for pair in field_errors(
                inner, f"{path}.{name}" if path and name != "_schema" else path or str(name)
            )
        ]
    if isinstance(errors, list):
        return [pair for inner in errors for pair in field_errors(inner, path)]
    return [(path, str(errors))]


def has_picture(kind_name: str) -> bool:
    kind = KINDS.get(kind_name)
    return bool(kind and kind.picture)


# -- chart ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    label: str


@dataclass(frozen=True)
class Chart:
    title: str
    width: int
    height: int
    peak: int
    bars: list[Bar]


def minute_chart(
    minutes: list[Minute], series: str, title: str, width: int = 600, height: int = 120
) -> Chart:
    """One bar per minute (the oldest on the left), scaled to the hour's peak; drawn as inline SVG."""
    values = [getattr(m, series) for m in minutes]
    peak = max(values, default=0)
    step = width / max(1, len(values))
    bars = [
        Bar(
            x=round(i * step, 1),
            y=round(height - (height * v / peak if peak else 0), 1),
            width=round(step * 0.8, 1),
            height=round(height * v / peak if peak else 0, 1),
            label=f"{m.start:%H:%M} UTC: {v:,}",
        )
        for i, (m, v) in enumerate(zip(minutes, values, strict=True))
    ]
    return Chart(title, width, height, peak, bars)


# -- a job's timeline -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Step:
    event: EventView
    #: until the next event (or until now, for the last one of an unfinished job)
    seconds: float | None
    actor: str | None


def timeline(job: JobView, history: list[EventView], keys: dict[int, str]) -> list[Step]:
    steps = []
    for i, event in enumerate(history):
        until = history[i + 1].at if i + 1 < len(history) else (None if job.is_final else datetime.now(UTC))
        seconds = (until - event.at).total_seconds() if until else None
        actor = keys.get(event.actor_key_id) if event.actor_key_id is not None else None
        steps.append(Step(event, seconds, actor))
    return steps


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def when(value: datetime | None) -> str:
    """A moment as every page shows it: in UTC, and saying so."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if value else ""


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def rate(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
