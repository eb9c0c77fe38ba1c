"""A small HTTP client for the zolve API (used by the CLI)."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO
from urllib.parse import urljoin

import click
import requests

from core.states import FINAL_STATES  # StrEnums, equal to the plain words the API sends; stdlib only

#: progress counters a job may report, as (done, total) keys: sharded jobs, then game-playing shards
_COUNTERS = (("shards_done", "shards_total"), ("games_done", "games_total"), ("games_done", "games"))


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


def _counter(progress: dict[str, Any]) -> tuple[str, str] | None:
    return next(((d, t) for d, t in _COUNTERS if progress.get(d) is not None and progress.get(t)), None)


def describe_progress(job: dict[str, Any]) -> str:
    """A job's state and progress as one line: for a sharded job (planetx.enumerate and the like) the
    shards done of the total, the rows so far (boards), their rate and the ETA once the API knows it;
    for others, their phase and whatever else their progress holds."""
    progress = dict(job.get("progress") or {})
    parts = [job["state"]]
    counter = _counter(progress)
    if counter:
        done, total = progress.pop(counter[0]), progress.pop(counter[1])
        parts.append(f"{done:,}/{total:,} {counter[0].removesuffix('_done')}")
    # a kind that stores no rows (only planetx.enumerate does: links.rows) still counts 0 "rows"
    stores_rows = "links" not in job or "rows" in (job["links"] or {})
    rates = [key for key in progress if key.endswith("_per_second")]
    for rate in rates:
        noun = rate.removesuffix("_per_second")
        per_second, count = progress.pop(rate), progress.pop(noun, None)
        if not stores_rows:
            continue
        if isinstance(count, int):
            parts.append(f"{count:,} {noun}")
        if per_second is not None:
            parts.append(f"{per_second:,.1f} {noun}/s")
    eta = progress.pop("eta_seconds", None)
    if eta is not None and job["state"] not in FINAL_STATES:
        parts.append(f"ETA {_duration(eta)}")
    if "phase" in progress:
        parts.append(str(progress.pop("phase")))
    parts.extend(f"{key}={value}" for key, value in progress.items() if value is not None)
    return " · ".join(parts)


class ProgressReporter:
    """Shows a job's progress on stderr (standard output stays for the result): a live line on a
    terminal, and otherwise a plain line whenever the progress changes, at most every `every` seconds
    (a change of state at once), with the elapsed time and the job id."""

    def __init__(self, job_id: str, every: float = 5.0, stream: TextIO | None = None):
        self.job_id, self.every = job_id, every
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty()
        self.started = time.monotonic()
        self.last_line: str | None = None
        self.last_state: str | None = None
        self.last_time = -float("inf")
        self.bar: Any = None

    def __enter__(self) -> ProgressReporter:
        if self.live:
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

    def update(self, job: dict[str, Any]) -> None:
        line = describe_progress(job)
        if self.bar is not None:
            progress = job.get("progress") or {}
            counter = _counter(progress)
            done, total = (progress[counter[0]], progress[counter[1]]) if counter else (None, None)
            self.bar.update(self.task, description=line, completed=done or 0, total=total)
            return
        now = time.monotonic()
        changed_state = job["state"] != self.last_state
        if line != self.last_line and (changed_state or now - self.last_time >= self.every):
            elapsed = _duration(now - self.started)
            print(f"[{elapsed:>9}] job {self.job_id[:8]} {line}", file=self.stream, flush=True)
            self.last_line, self.last_state, self.last_time = line, job["state"], now


class Client:
    def __init__(self, url: str, key: str, timeout: float = 60.0):
        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {key}"
        self.timeout = timeout

    def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = self.session.request(method, self.url + path, timeout=self.timeout, **kwargs)
        except requests.ConnectionError as exc:
            raise click.ClickException(f"cannot reach {self.url}: is the service running?") from exc
        try:
            body = response.json()
        except ValueError:
            body = {"message": response.text[:200]}
        if response.status_code >= 400:
            detail = f"\n{body['errors']}" if body.get("errors") else ""
            raise click.ClickException(f"{response.status_code}: {body.get('message')}{detail}")
        return body

    def submit(self, body: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._request("POST", "/jobs", json=body, headers=headers)

    def get(self, job_id: str, wait: float = 0) -> dict[str, Any]:
        return self._request("GET", f"/jobs/{job_id}", params={"wait": wait} if wait else None)

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._request("POST", f"/jobs/{job_id}/cancel")

    def iter_jobs(
        self, states: tuple[str, ...] = (), kind: str | None = None, limit: int = 20, all_pages: bool = False
    ) -> Iterator[dict[str, Any]]:
        params: dict[str, Any] = {"state": list(states), "limit": limit}
        if kind:
            params["kind"] = kind
        while True:
            page = self._request("GET", "/jobs", params=params)
            yield from page["items"]
            if not all_pages or not page.get("next_cursor"):
                return
            params["cursor"] = page["next_cursor"]

    def export(self, job_id: str, fmt: str, output: Any) -> int:
        """Stream a job's rows (Planet X: its boards) into `output`, from the export the job links to;
        returns how many were written."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        job = self.get(job_id)
        path = (job.get("links") or {}).get(fmt)
        if path is None:
            raise click.ClickException(f"job {job_id} ({job.get('kind')}) stores no rows to export")
        noun = path.rpartition("/")[2].rpartition(".")[0] or "rows"  # /jobs/{id}/boards.csv: boards
        try:
            response = self.session.get(urljoin(self.url + "/", path), stream=True, timeout=self.timeout)
        except requests.ConnectionError as exc:
            raise click.ClickException(f"cannot reach {self.url}: is the service running?") from exc
        if response.status_code >= 400:
            raise click.ClickException(f"{response.status_code}: {response.json().get('message')}")
        total = int(response.headers.get("X-Total-Count") or 0) or None
        # NDJSON (application/x-ndjson) comes without a charset, and then iter_lines(decode_unicode=True)
        # yields bytes; both exports are UTF-8
        response.encoding = "utf-8"
        written = 0
        columns = [BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(noun, total=total)
            for chunk in response.iter_lines(chunk_size=1 << 16, decode_unicode=True):
                output.write(chunk + "\n")
                if not (fmt == "csv" and chunk.startswith("code,")):
                    written += 1
                    if written % 5000 == 0:
                        bar.update(task, completed=written)
        output.flush()
        return written

    def wait(
        self, job_id: str, timeout: float | None = None, every: float = 5.0, poll: float = 2.0
    ) -> dict[str, Any]:
        """Long-poll until the job finishes (`poll` seconds a request), showing its state and progress on
        stderr (see ProgressReporter: a live line on a terminal, else a line at most every `every` s)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with ProgressReporter(job_id, every=every) as reporter:
            first = True
            while True:
                job = self.get(job_id, wait=0 if first else poll)  # the state at once, then long polls
                first = False
                reporter.update(job)
                if job["state"] in FINAL_STATES:
                    return job
                if deadline is not None and time.monotonic() > deadline:
                    raise click.ClickException(f"job {job_id} still {job['state']} after {timeout:g} s")
