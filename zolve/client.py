"""The Python client of the zolve API (the CLI is built on it).

    from zolve.client import Client

    client = Client("http://127.0.0.1:8000", "zk_...")
    job = client.submit("planetx.enumerate", {"mode": "standard"})
    done = client.wait(job["id"])            # the job's event stream; long-polls if streams are refused
    for board in client.iter_boards(job["id"]):
        ...

Every refusal of the API raises an ApiError subclass carrying its status, message and field messages
(`errors`); 429 and 503 are retried with exponential back-off, honouring `Retry-After`.
"""

from __future__ import annotations

import base64
import contextvars
import hashlib
import hmac
import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TextIO
from urllib.parse import urljoin

import requests
from tenacity import RetryCallState, Retrying, retry_if_exception, wait_exponential

from core.progress import Progress  # stdlib only, like the states
from core.states import FINAL_STATES  # StrEnums, equal to the plain words the API sends; stdlib only


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


#: the state a job's event puts it in
_STATE_OF_EVENT = {
    "running": "running",
    "cancel_requested": "cancelling",
    "requeued": "queued",
    "retried": "queued",
}
#: how far along its life each unfinished state is
_STAGE = {"queued": 0, "running": 1, "cancelling": 2}


def _moves_on(shown: dict[str, Any], event: Event, fetched: dict[str, Any]) -> bool:
    """Whether a state event is news: a requeue or retry newer than the run the job was fetched in, or
    a state not behind the one shown."""
    state = _STATE_OF_EVENT[event.event]
    if event.event in ("requeued", "retried"):
        began = fetched.get("started_at")
        return began is not None and str(event.data.get("at", "")) > str(began)
    return _STAGE[state] >= _STAGE.get(shown["state"], 0)


def describe_progress(job: dict[str, Any]) -> str:
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


# -- errors -------------------------------------------------------------------------------------------
class ApiError(Exception):
    """The API refused a request: its HTTP status, message and field messages (`errors`, keyed like the
    request: e.g. {"params": {"dice": ["..."]}})."""

    status = 0

    def __init__(
        self,
        message: str,
        errors: dict[str, Any] | None = None,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.errors, self.retry_after = message, errors, retry_after
        if status is not None:
            self.status = status

    def __str__(self) -> str:
        detail = f"\n{json.dumps(self.errors, indent=2)}" if self.errors else ""
        return f"{self.status}: {self.message}{detail}" if self.status else f"{self.message}{detail}"


class Unreachable(ApiError):
    """No answer from the service (not running, wrong URL, network down)."""


class BadRequest(ApiError):
    status = 400


class Unauthorized(ApiError):
    status = 401


class NotFound(ApiError):
    status = 404


class Conflict(ApiError):
    status = 409


class TooLarge(ApiError):
    status = 413


class Invalid(ApiError):
    """422: the request's fields are refused; `errors` says which and why."""

    status = 422


class RateLimited(ApiError):
    status = 429


class Unavailable(ApiError):
    status = 503


class JobFailed(ApiError):
    """A job asked for its result ended failed or cancelled; `job` is its final resource."""

    def __init__(self, job: dict[str, Any]) -> None:
        error = job.get("error") or {}
        super().__init__(f"job {job['id']} {job['state']}: {error.get('message') or ''}".rstrip(": "))
        self.job = job


class WaitTimeout(ApiError):
    """The job had not finished within the time the caller gave it."""


class NoRows(ApiError):
    """The job's kind stores no rows (only some kinds do, e.g. Planet X's boards)."""


_ERRORS: dict[int, type[ApiError]] = {
    error.status: error
    for error in (BadRequest, Unauthorized, NotFound, Conflict, TooLarge, Invalid, RateLimited, Unavailable)
}

#: refusals worth another try: the request was not acted on
RETRIED = (RateLimited, Unavailable)
#: the monotonic time a caller's wait() ends: a retry whose back-off would end after it is not made
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


def _error_of(response: requests.Response) -> ApiError:
    try:
        body = response.json()
    except ValueError:
        body = {"message": response.text[:200]}
    if not isinstance(body, dict):
        body = {"message": str(body)[:200]}
    retry_after = response.headers.get("Retry-After")
    error_type = _ERRORS.get(response.status_code, ApiError)
    return error_type(
        str(body.get("message") or response.reason),
        body.get("errors"),
        status=response.status_code,
        retry_after=float(retry_after) if retry_after and retry_after.isdigit() else None,
    )


# -- webhooks -------------------------------------------------------------------------------------------
class SeenMessages:
    """The signed messages (webhook-id and timestamp) one receiver process has accepted, each kept until
    its timestamp is out of every window (so the memory holds one window's deliveries, at most `maxsize`).
    The service's retries sign the same webhook-id with a new timestamp: they are new messages; the same
    id and timestamp again is a replay. Receivers in several processes need a shared store instead (e.g.
    Redis `SET webhook-id:timestamp NX EX 600`)."""

    def __init__(self, maxsize: int = 100_000) -> None:
        self._seen: dict[tuple[str, int], float] = {}
        self._maxsize = maxsize
        self._lock = threading.Lock()

    def first_time(self, message_id: str, timestamp: int, keep_for: float) -> bool:
        """Record the message; False if it was recorded before (a replay)."""
        now = time.monotonic()
        with self._lock:
            if len(self._seen) >= self._maxsize:
                self._forget_expired(now)
            if (message_id, timestamp) in self._seen or len(self._seen) >= self._maxsize:
                return False  # full of live messages: refuse rather than forget one (it could be replayed)
            self._seen[(message_id, timestamp)] = now + keep_for
            return True

    def _forget_expired(self, now: float) -> None:
        self._seen = {message: until for message, until in self._seen.items() if until > now}


#: the messages this process has accepted, when verify_signature is given no store of its own
SEEN = SeenMessages()


def verify_signature(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    tolerance: float = 300,
    seen: SeenMessages | None = None,
) -> bool:
    """Whether a webhook delivery is the service's, and new: its `webhook-signature` (Standard Webhooks:
    `v1,` base64 HMAC-SHA256 of "id.timestamp.body", keyed with the decoded part of your `whsec_` secret)
    is right, its `webhook-timestamp` within `tolerance` seconds of now, and the same signed message
    (webhook-id and timestamp) was not accepted before by `seen` (default: this process's `SEEN`). A retry
    of a delivery is signed anew with its own timestamp, so it passes; a replay does not."""
    lowered = {name.lower(): value for name, value in headers.items()}
    try:
        message_id, timestamp = lowered["webhook-id"], int(lowered["webhook-timestamp"])
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except (KeyError, ValueError):
        return False
    if abs(time.time() - timestamp) > tolerance:
        return False
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    offered = [part.partition(",") for part in lowered.get("webhook-signature", "").split()]
    if not any(version == "v1" and hmac.compare_digest(expected, sig) for version, _, sig in offered):
        return False
    # kept for two windows: a timestamp up to `tolerance` ahead of this clock stays valid that long
    return (SEEN if seen is None else seen).first_time(message_id, timestamp, 2 * tolerance)


# -- server-sent events ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Event:
    """One event of a stream: its id (resume after it with Last-Event-ID), name and JSON data."""

    id: int
    event: str
    data: dict[str, Any]


def parse_events(lines: Iterator[str]) -> Iterator[Event]:
    """Server-sent events from a stream's lines (comments and `retry:` lines skipped)."""
    return (event for event in _frames(lines) if event is not None)


def _frames(lines: Iterator[str]) -> Iterator[Event | None]:
    """A stream's events, and None for each comment (the server's keepalives): a sign of life that lets
    a waiting reader look at its clock."""
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if "data" in fields:
                yield Event(
                    int(fields.get("id") or 0), fields.get("event", "message"), json.loads(fields["data"])
                )
            fields = {}
        elif line.startswith(":"):
            yield None
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value


class Client:
    def __init__(
        self, url: str, key: str, timeout: float = 60.0, retries: int = 5, max_backoff: float = 30.0
    ) -> None:
        self.url = url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {key}"
        self.timeout, self.retries, self.max_backoff = timeout, retries, max_backoff

    # -- transport --------------------------------------------------------------------------------------
    def _wait_seconds(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, ApiError) and error.retry_after is not None:
            return min(error.retry_after, self.max_backoff)
        return wait_exponential(multiplier=0.5, max=self.max_backoff)(state)

    def _retrying(self) -> Retrying:
        deadline = _DEADLINE.get()

        def stop(state: RetryCallState) -> bool:
            """After `retries` retries, or when the back-off would outlast the caller's deadline."""
            if state.attempt_number > self.retries:
                return True
            return deadline is not None and time.monotonic() + self._wait_seconds(state) > deadline

        return Retrying(
            retry=retry_if_exception(lambda error: isinstance(error, RETRIED)),
            wait=self._wait_seconds,
            stop=stop,
            reraise=True,
        )

    def _send(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """The response to a request (retried on 429/503); an ApiError for any other refusal."""
        # our own paths are relative to the base URL; a link the API gave is a path from the host
        url = path if path.startswith("http") else urljoin(self.url + "/", path)
        kwargs.setdefault("timeout", self.timeout)

        def attempt() -> requests.Response:
            try:
                response = self.session.request(method, url, **kwargs)
            except requests.ConnectionError as exc:
                raise Unreachable(f"cannot reach {self.url}: is the service running?") from exc
            if response.status_code >= 400:
                raise _error_of(response)
            return response

        return self._retrying()(attempt)

    def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        return self._send(method, path, **kwargs).json()

    # -- jobs -------------------------------------------------------------------------------------------
    def submit(
        self,
        kind: str,
        params: dict[str, Any] | None = None,
        *,
        time_limit: float | None = None,
        fresh: bool = False,
        callback_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Submit a job; returns it (queued, or already succeeded when served from the cache)."""
        body: dict[str, Any] = {"kind": kind, "params": params or {}}
        if time_limit is not None:
            body["time_limit"] = time_limit
        if fresh:
            body["fresh"] = True
        if callback_url is not None:
            body["callback_url"] = callback_url
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._request("POST", "jobs", json=body, headers=headers)

    def get(self, job_id: str, wait: float = 0) -> dict[str, Any]:
        return self._request("GET", f"jobs/{job_id}", params={"wait": wait} if wait else None)

    def cancel(self, job_id: str) -> dict[str, Any]:
        return self._request("POST", f"jobs/{job_id}/cancel")

    def result(self, job_id: str, timeout: float | None = None) -> dict[str, Any]:
        """The job's result once it has succeeded (waiting for it); JobFailed if it failed or was
        cancelled."""
        job = self.get(job_id)
        if job["state"] not in FINAL_STATES:
            job = self.wait(job_id, timeout=timeout, show_progress=False)
        if job["state"] != "succeeded":
            raise JobFailed(job)
        return job["result"]

    def iter_jobs(
        self, states: tuple[str, ...] = (), kind: str | None = None, limit: int = 20, all_pages: bool = False
    ) -> Iterator[dict[str, Any]]:
        params: dict[str, Any] = {"state": list(states), "limit": limit}
        if kind:
            params["kind"] = kind
        return self._pages("jobs", params, all_pages)

    def _pages(self, path: str, params: dict[str, Any], all_pages: bool = True) -> Iterator[dict[str, Any]]:
        """The items of a keyset-paged listing, following `next_cursor`."""
        while True:
            page = self._request("GET", path, params=params)
            yield from page["items"]
            if not all_pages or not page.get("next_cursor"):
                return
            params = {**params, "cursor": page["next_cursor"]}

    def _rows_link(self, job_id: str, link: str) -> str:
        job = self.get(job_id)
        path = (job.get("links") or {}).get(link)
        if path is None:
            raise NoRows(f"job {job_id} ({job.get('kind')}) stores no rows to export")
        return path

    def iter_rows(self, job_id: str, page_size: int = 1000, **filters: Any) -> Iterator[dict[str, Any]]:
        """Every stored row of a job ({code, <item>}: a Planet X enumeration's boards {code, board}, a
        Taiji enumeration's solutions {code, solution}), a page at a time, narrowed by the kind's filters
        (e.g. x=3: Planet X in sector 3)."""
        return self._pages(self._rows_link(job_id, "rows"), {"limit": page_size, **filters})

    #: the name this method had when Planet X's boards were the only rows
    iter_boards = iter_rows

    # -- events -----------------------------------------------------------------------------------------
    def events(
        self, job_id: str | None = None, last_event_id: int | None = None, **filters: Any
    ) -> Iterator[Event]:
        """A job's events (or, without `job_id`, all of yours, narrowed by kind, state, batch) as they
        happen. A dropped connection, or one the server ends after its `stream_max_seconds`, is resumed
        with Last-Event-ID; a job's stream ends after its final state."""
        feed = self._feed(job_id, last_event_id, None, filters)
        return (event for event in feed if event is not None)

    def _feed(
        self, job_id: str | None, last: int | None, deadline: float | None, filters: dict[str, Any]
    ) -> Iterator[Event | None]:
        """Events, and None for every keepalive, over as many connections as it takes; WaitTimeout once
        `deadline` (monotonic) has passed."""
        path = f"jobs/{job_id}/events" if job_id else "events"
        drops = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            try:
                response = self._send(
                    "GET",
                    path,
                    params=filters or None,
                    headers=headers,
                    stream=True,
                    timeout=(self.timeout, self._read_timeout(deadline)),
                )
                with response:
                    response.encoding = "utf-8"
                    for event in _frames(response.iter_lines(decode_unicode=True)):
                        _check(deadline)
                        if event is not None:
                            last, drops = event.id, 0
                        yield event
                        if job_id and event is not None and event.event in FINAL_STATES:
                            return
                # the server ended the stream: its time limit, or the job had ended (a long-poll reads
                # the job fresh, past the API's short cache, and answers at once if it has)
                if job_id and self.get(job_id, wait=1)["state"] in FINAL_STATES:
                    return
            except (
                requests.ConnectionError,
                requests.Timeout,
                requests.exceptions.ChunkedEncodingError,
            ) as exc:
                _check(deadline)
                drops += 1
                if drops > self.retries:
                    raise Unreachable(f"the event stream of {self.url} keeps dropping") from exc
                time.sleep(min(0.2 * 2**drops, self.max_backoff))
            _check(deadline)

    @staticmethod
    def _read_timeout(deadline: float | None) -> float:
        """How long a stream may stay silent: a minute, or until just past the caller's deadline."""
        if deadline is None:
            return 60.0
        return max(0.1, min(60.0, deadline - time.monotonic() + 0.1))

    def wait(
        self,
        job_id: str,
        timeout: float | None = None,
        every: float = 5.0,
        poll: float = 2.0,
        show_progress: bool = False,
        on_update: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Wait for the job to finish and return its final resource: told by its event stream, or by
        long-polls when the service refuses a stream (too many open, or an older service). Silent unless
        asked: `show_progress=True` writes its state and progress to stderr (ProgressReporter, as the CLI
        does); `on_update` gets each newer view of the job."""
        deadline = None if timeout is None else time.monotonic() + timeout
        within = _DEADLINE.set(deadline)
        try:
            return self._wait(job_id, timeout, deadline, poll, every if show_progress else None, on_update)
        except RETRIED as busy:  # retried until the next try would come after the deadline
            if deadline is None:
                raise
            raise WaitTimeout(
                f"job {job_id}: the service was still busy ({busy}) at the {timeout:g}-s timeout"
            ) from busy
        finally:
            _DEADLINE.reset(within)

    def _wait(
        self,
        job_id: str,
        timeout: float | None,
        deadline: float | None,
        poll: float,
        every: float | None,
        on_update: Callable[[dict[str, Any]], None] | None,
    ) -> dict[str, Any]:
        reporter = ProgressReporter(job_id, every=every) if every is not None else None

        def update(job: dict[str, Any]) -> None:
            if reporter is not None:
                reporter.update(job)
            if on_update is not None:
                on_update(job)

        with reporter if reporter is not None else _Nothing():
            job = self.get(job_id)
            update(job)
            if job["state"] in FINAL_STATES:
                return job
            try:
                return self._wait_streaming(job, deadline, update)
            except WaitTimeout:
                raise WaitTimeout(f"job {job_id} had not finished after {timeout:g} s") from None
            except (RateLimited, NotFound, Unreachable):
                pass  # no stream to be had: long-polls
            while True:
                if deadline is not None and time.monotonic() > deadline:
                    raise WaitTimeout(f"job {job_id} still {job['state']} after {timeout:g} s")
                left = poll if deadline is None else max(0.0, min(poll, deadline - time.monotonic()))
                job = self.get(job_id, wait=left)
                update(job)
                if job["state"] in FINAL_STATES:
                    return job

    def _wait_streaming(
        self, job: dict[str, Any], deadline: float | None, update: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        """The job's stream replays its history before what happens next: a state is shown only when it
        is not behind the one shown (a replayed `running` after `cancelling` showed the job going back),
        except a requeue or retry that happens now."""
        shown = dict(job)
        for event in self._feed(job["id"], None, deadline, {}):
            if event is None:
                continue
            if event.event in FINAL_STATES:
                # a long-poll reads the job fresh (a plain GET may be served from the API's short cache)
                final = self.get(job["id"], wait=5)
                update(final)
                return final
            if event.event == "progress":
                shown = {**shown, "progress": event.data.get("detail") or {}}
            elif event.event in _STATE_OF_EVENT and _moves_on(shown, event, job):
                shown = {**shown, "state": _STATE_OF_EVENT[event.event]}
            else:
                continue
            update(shown)
        # the stream ended on a final state the feed read from the job itself
        final = self.get(job["id"], wait=5)
        update(final)
        return final

    # -- exports ----------------------------------------------------------------------------------------
    def export(self, job_id: str, fmt: str, output: Any, show_progress: bool = False) -> int:
        """Stream a job's rows (Planet X: its boards) into `output`, from the export the job links to;
        returns how many were written. `show_progress=True` shows a bar on stderr (as the CLI does)."""
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        path = self._rows_link(job_id, fmt)
        noun = path.rpartition("/")[2].rpartition(".")[0] or "rows"  # /jobs/{id}/boards.csv: boards
        response = self._send("GET", path, stream=True)
        total = int(response.headers.get("X-Total-Count") or 0) or None
        # NDJSON (application/x-ndjson) comes without a charset, and then iter_lines(decode_unicode=True)
        # yields bytes; both exports are UTF-8
        response.encoding = "utf-8"
        written = 0
        columns = [BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
        with Progress(
            *columns, console=Console(stderr=True), transient=True, disable=not show_progress
        ) as bar:
            task = bar.add_task(noun, total=total)
            for chunk in response.iter_lines(chunk_size=1 << 16, decode_unicode=True):
                output.write(chunk + "\n")
                if not (fmt == "csv" and chunk.startswith("code,")):
                    written += 1
                    if written % 5000 == 0:
                        bar.update(task, completed=written)
        output.flush()
        return written

    # -- batches ----------------------------------------------------------------------------------------
    def submit_batch(
        self,
        kind: str,
        items: list[dict[str, Any]],
        *,
        time_limit: float | None = None,
        callback_url: str | None = None,
    ) -> dict[str, Any]:
        """Submit up to 500 requests ({client_id, params}) of one kind; returns the batch."""
        body: dict[str, Any] = {"kind": kind, "items": items}
        if time_limit is not None:
            body["time_limit"] = time_limit
        if callback_url is not None:
            body["callback_url"] = callback_url
        return self._request("POST", "batches", json=body)

    def get_batch(self, batch_id: str) -> dict[str, Any]:
        return self._request("GET", f"batches/{batch_id}", params={"limit": 1})

    def iter_batch_items(
        self, batch_id: str, states: tuple[str, ...] = (), page_size: int = 100
    ) -> Iterator[dict[str, Any]]:
        """The batch's items in submission order, with their state and result, a page at a time."""
        params: dict[str, Any] = {"limit": page_size}
        if states:
            params["state"] = list(states)
        return self._pages(f"batches/{batch_id}", params)

    # -- webhooks ---------------------------------------------------------------------------------------
    def webhook_secret(self, rotate: bool = False) -> str:
        """The secret your webhook deliveries are signed with (`rotate`: a new one from now on)."""
        if rotate:
            return self._request("POST", "webhooks/secret/rotate")["secret"]
        return self._request("GET", "webhooks/secret")["secret"]

    def deliveries(self, job_id: str) -> list[dict[str, Any]]:
        """The job's webhook deliveries, each with every attempt (status, latency, reason)."""
        return self._request("GET", f"jobs/{job_id}/deliveries")["items"]


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise WaitTimeout("the job had not finished within the time given")


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
