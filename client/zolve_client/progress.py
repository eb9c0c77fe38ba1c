"""How the client shows a job's progress (a line, a live bar with rich, an export's bar); what the progress
is, on the wire, is `zolve_client.wire.Progress`."""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from zolve_client.states import FINAL_STATES
from zolve_client.wire import Progress

__all__ = ["ExportProgress", "Progress", "ProgressReporter", "describe_progress", "has_rich"]


def has_rich() -> bool:
    """Whether rich (the `progress` extra) is installed: the live line and the export's bar need it."""
    return importlib.util.find_spec("rich") is not None


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def describe_progress(job: Mapping[str, Any]) -> str:
    """A job's state and progress as one line: for a sharded job (planetx.enumerate and the like) the
    shards done of the total, the rows so far (boards), their rate and the ETA once the API knows it;
    for others, their phase, their own counter (games done of the total) and whatever else they report."""
    raw = job.get("progress") or {}
    noun = next((key.removesuffix("_per_second") for key in raw if key.endswith("_per_second")), "rows")
    progress = Progress.from_json(raw, noun)
    parts, extra = [job["state"]], dict(progress.extra)
    counted = progress.counter()
    if counted:
        name, done, total = counted
        parts.append(f"{done:,}/{total:,} {name}")
        if not progress.sharded:
            extra.pop(f"{name}_done", None)
            extra.pop(f"{name}_total", None) if f"{name}_total" in extra else extra.pop(name, None)
    # a sharded kind that stores no rows (links without `rows`) still counts 0 "rows"
    if progress.sharded and ("links" not in job or "rows" in (job["links"] or {})):
        if isinstance(progress.rows, int):
            parts.append(f"{progress.rows:,} {noun}")
        if progress.rows_per_second is not None:
            parts.append(f"{progress.rows_per_second:,.1f} {noun}/s")
    if progress.eta_seconds is not None and job["state"] not in FINAL_STATES:
        parts.append(f"ETA {_duration(progress.eta_seconds)}")
    if progress.phase is not None:
        parts.append(str(progress.phase))
    parts.extend(f"{key}={value}" for key, value in extra.items() if value is not None)
    return " · ".join(parts)


class ProgressReporter:
    """Shows a job's progress on stderr (standard output stays for the result): a live line on a
    terminal (with rich installed: `pip install zolve-client[progress]`), and otherwise a plain line
    whenever the progress changes, at most every `every` seconds (a change of state at once), with the
    elapsed time and the job id."""

    def __init__(self, job_id: str, every: float = 5.0, stream: TextIO | None = None):
        self.job_id, self.every = job_id, every
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.monotonic()
        self.last_line: str | None = None
        self.last_state: str | None = None
        self.last_time = -float("inf")
        self.bar: Any = None

    def __enter__(self) -> ProgressReporter:
        if self.stream.isatty() and has_rich():
            from rich.console import Console
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()]
            self.bar = Progress(
                *columns,
                console=Console(file=self.stream),
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.job_id[:8], total=None)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def update(self, job: Mapping[str, Any]) -> None:
        line = describe_progress(job)
        if self.bar is not None:
            counted = Progress.from_json(job.get("progress")).counter()
            done, total = counted[1:] if counted else (None, None)
            self.bar.update(self.task, description=line, completed=done or 0, total=total)
            return
        now = time.monotonic()
        changed_state = job["state"] != self.last_state
        if line != self.last_line and (changed_state or now - self.last_time >= self.every):
            elapsed = _duration(now - self.started)
            print(f"[{elapsed:>9}] job {self.job_id[:8]} {line}", file=self.stream, flush=True)
            self.last_line, self.last_state, self.last_time = line, job["state"], now


class ExportProgress:
    """How many rows an export has written, on stderr while it runs: a bar with rich installed, else a
    plain line at most every `every` seconds; nothing unless `enabled`."""

    def __init__(
        self, noun: str, total: int | None, enabled: bool, every: float = 5.0, stream: TextIO | None = None
    ) -> None:
        self.noun, self.total, self.every = noun, total, every
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.started = self.last_time = time.monotonic()
        self.bar: Any = None

    def __enter__(self) -> ExportProgress:
        if self.enabled and has_rich():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            columns = [BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
            self.bar = Progress(*columns, console=Console(file=self.stream), transient=True)
            self.bar.start()
            self.task = self.bar.add_task(self.noun, total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()

    def update(self, written: int) -> None:
        if self.bar is not None:
            self.bar.update(self.task, completed=written)
            return
        now = time.monotonic()
        if self.enabled and now - self.last_time >= self.every:
            of = f"/{self.total:,}" if self.total else ""
            elapsed = _duration(now - self.started)
            print(f"[{elapsed:>9}] {written:,}{of} {self.noun}", file=self.stream, flush=True)
            self.last_time = now
