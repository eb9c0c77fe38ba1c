"""The Client: the API's calls as methods, over one urllib3 connection pool (thread-safe)."""

from __future__ import annotations

import codecs
import contextvars
import functools
import importlib.metadata
import json
import time
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any
from urllib.parse import urlencode, urljoin

import urllib3
from tenacity import RetryCallState, Retrying, retry_if_exception, wait_exponential

from zolve_client.errors import (
    RETRIED,
    ApiError,
    JobFailed,
    NoRows,
    NotFound,
    RateLimited,
    Unreachable,
    WaitTimeout,
    error_of,
)
from zolve_client.events import Event, frames, text_lines
from zolve_client.progress import ExportProgress, ProgressReporter
from zolve_client.states import FINAL_STATES

#: the monotonic time a caller's wait() ends: a retry whose back-off would end after it is not made
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)
#: a stream cut off mid-way (reset, timed out, ended inside a chunk): resumed with Last-Event-ID
_DROPPED = urllib3.exceptions.HTTPError
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


@functools.cache
def _version() -> str:
    try:
        return importlib.metadata.version("zolve-client")
    except importlib.metadata.PackageNotFoundError:  # imported from a checkout, not installed
        return "0"


class Client:
    """The zolve API for one key. `timeout` bounds connecting and each wait for data; 429 and 503 are
    retried `retries` times with exponential back-off (at most `max_backoff` s), honouring Retry-After."""

    def __init__(
        self, url: str, key: str, timeout: float = 60.0, retries: int = 5, max_backoff: float = 30.0
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout, self.retries, self.max_backoff = timeout, retries, max_backoff
        #: sent with every request (urllib3 sends a request's own headers instead of a pool's: merged here)
        self._headers = {"Authorization": f"Bearer {key}", "User-Agent": f"zolve-client/{_version()}"}
        # no retries or redirects of urllib3's own: a refusal is ours to read, a retry tenacity's; up to
        # 10 connections kept per host (as requests did), so that threads sharing a Client, or a wait()
        # whose stream and polls overlap, reuse them instead of opening new ones
        self._pool = urllib3.PoolManager(retries=False, maxsize=10)

    def close(self) -> None:
        """Close the kept connections (a later call opens new ones)."""
        self._pool.clear()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transport --------------------------------------------------------------------------------------
    def _wait_seconds(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, ApiError) and error.retry_after is not None:
            return min(error.retry_after, self.max_backoff)
        return float(wait_exponential(multiplier=0.5, max=self.max_backoff)(state))

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

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> urllib3.BaseHTTPResponse:
        """The response to a request (retried on 429/503); an ApiError for any other refusal. `stream`:
        its body is left to be read (and the response to be released) by the caller."""
        # our own paths are relative to the base URL; a link the API gave is a path from the host
        url = path if path.startswith("http") else urljoin(self.url + "/", path)
        given = {name: value for name, value in (params or {}).items() if value is not None}
        if given:  # a None leaves the parameter out (as requests did), never sends "None"
            url += ("&" if "?" in url else "?") + urlencode(given, doseq=True)
        sent = {**self._headers, **(headers or {})}
        encoded = None
        if body is not None:
            encoded = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        timeout = urllib3.Timeout(connect=self.timeout, read=read_timeout or self.timeout)

        def attempt() -> urllib3.BaseHTTPResponse:
            try:
                response = self._pool.request(
                    method, url, body=encoded, headers=sent, timeout=timeout, preload_content=not stream
                )
            except urllib3.exceptions.HTTPError as exc:
                raise Unreachable(f"cannot reach {self.url}: is the service running? ({exc})") from exc
            if response.status >= 400:
                refused = error_of(response.status, response.reason, response.headers, response.data)
                response.release_conn()
                raise refused
            return response

        return self._retrying()(attempt)

    def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = self._send(method, path, **kwargs)
        try:
            answer: dict[str, Any] = json.loads(response.data)
        except ValueError as exc:
            raise ApiError(f"{method} {path}: the answer is not JSON", status=response.status) from exc
        return answer

    # -- jobs -------------------------------------------------------------------------------------------
    def submit(
        self,
        kind: str,
        params: dict[str, Any] | None = None,
        *,
        time_limit: float | None = None,
        fresh: bool = False,
        priority: int = 0,
        queue_timeout: float | None = None,
        callback_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Submit a job; returns it (queued, or already succeeded when served from the cache).
        `priority` (-100 to 100) orders your own waiting work; a job not started within `queue_timeout`
        seconds ends `expired` without running."""
        body: dict[str, Any] = {"kind": kind, "params": params or {}}
        if time_limit is not None:
            body["time_limit"] = time_limit
        if fresh:
            body["fresh"] = True
        body |= _ordering(priority, queue_timeout)
        if callback_url is not None:
            body["callback_url"] = callback_url
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._request("POST", "jobs", body=body, headers=headers)

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
        result: dict[str, Any] = job["result"]
        return result

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
        path: str | None = (job.get("links") or {}).get(link)
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
                    read_timeout=self._read_timeout(deadline),
                )
                try:
                    for event in frames(text_lines(response.stream(1 << 14))):
                        _check(deadline)
                        if event is not None:
                            last, drops = event.id, 0
                        yield event
                        if job_id and event is not None and event.event in FINAL_STATES:
                            return
                finally:
                    response.release_conn()
                # the server ended the stream: its time limit, or the job had ended (a long-poll reads
                # the job fresh, past the API's short cache, and answers at once if it has)
                if job_id and self.get(job_id, wait=1)["state"] in FINAL_STATES:
                    return
            except _DROPPED as exc:
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
    def export(self, job_id: str, fmt: str, output: IO[str], show_progress: bool = False) -> int:
        """Stream a job's rows (Planet X: its boards) into `output` (a text file), from the export the
        job links to (`fmt`: csv or ndjson); returns how many rows were written. `show_progress=True`
        shows their count on stderr (as the CLI does): a bar with rich installed, else a line now and then."""
        path = self._rows_link(job_id, fmt)
        noun = path.rpartition("/")[2].rpartition(".")[0] or "rows"  # /jobs/{id}/boards.csv: boards
        response = self._send("GET", path, stream=True)
        total = int(response.headers.get("X-Total-Count") or 0) or None
        decoder = codecs.getincrementaldecoder("utf-8")()  # both exports are UTF-8
        lines, start, end = 0, "", "\n"
        with ExportProgress(noun, total, enabled=show_progress) as shown:
            try:
                for chunk in response.stream(1 << 18):
                    text = decoder.decode(chunk)
                    if not text:
                        continue
                    output.write(text)
                    lines += text.count("\n")
                    start, end = start or text, text[-1]
                    shown.update(lines)
                if tail := decoder.decode(b"", final=True):  # raises for a cut-off last character
                    output.write(tail)
                    lines, end = lines + tail.count("\n"), tail[-1]
            finally:
                response.release_conn()
        if end != "\n":  # a last row without its line ending
            output.write("\n")
            lines += 1
        output.flush()
        header = fmt == "csv" and start.startswith("code,")
        return lines - header

    # -- batches ----------------------------------------------------------------------------------------
    def submit_batch(
        self,
        kind: str,
        items: list[dict[str, Any]],
        *,
        time_limit: float | None = None,
        priority: int = 0,
        queue_timeout: float | None = None,
        callback_url: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Submit up to 500 requests ({client_id, params}) of one kind; returns the batch (`priority`,
        `queue_timeout`: each of its jobs', as in `submit`). With an `idempotency_key`, the same call
        repeated (after a dropped answer, say) returns the same batch."""
        body: dict[str, Any] = {"kind": kind, "items": items}
        if time_limit is not None:
            body["time_limit"] = time_limit
        body |= _ordering(priority, queue_timeout)
        if callback_url is not None:
            body["callback_url"] = callback_url
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        return self._request("POST", "batches", body=body, headers=headers)

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
            secret: str = self._request("POST", "webhooks/secret/rotate")["secret"]
        else:
            secret = self._request("GET", "webhooks/secret")["secret"]
        return secret

    def deliveries(self, job_id: str) -> list[dict[str, Any]]:
        """The job's webhook deliveries, each with every attempt (status, latency, reason)."""
        items: list[dict[str, Any]] = self._request("GET", f"jobs/{job_id}/deliveries")["items"]
        return items


def _check(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise WaitTimeout("the job had not finished within the time given")


class _Nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _ordering(priority: int, queue_timeout: float | None) -> dict[str, Any]:
    """A job's priority and queue timeout as a body sends them (nothing for the defaults)."""
    fields: dict[str, Any] = {"priority": priority} if priority else {}
    if queue_timeout is not None:
        fields["queue_timeout"] = queue_timeout
    return fields
