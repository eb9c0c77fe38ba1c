"""AsyncClient: Client's methods (client.py), awaited, over one httpx.AsyncClient: the same names,
arguments and answers; its iterators are async ones (`async for`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from typing import IO, Any, TypeVar, Unpack, overload

import httpx
from tenacity import AsyncRetrying

from zolve_client._core import (
    Base,
    BatchOptions,
    Call,
    SubmitOptions,
    deadline_in,
    idempotency,
    job_id_of,
    kind_names,
    submit_body,
)
from zolve_client._flows import (
    OnUpdate,
    RowsWriter,
    Updates,
    Watch,
    check,
    deadline_after,
    is_final,
    next_page,
    poll_wait,
)
from zolve_client.errors import RETRIED, JobFailed, NoRows, NotFound, RateLimited, Unreachable, WaitTimeout
from zolve_client.events import Event, aframes
from zolve_client.kinds import Kind
from zolve_client.models import Batch, BatchItem, BatchItemCreate, Delivery, Job
from zolve_client.states import FINAL_STATES

P = TypeVar("P")
R = TypeVar("R")


class AsyncClient(Base):
    """Client's calls, async (`async with AsyncClient() as client: job = await client.submit(...)`): the
    zolve API for one key: `url` and `key` default to ZOLVE_URL (else http://127.0.0.1:8000) and
    ZOLVE_API_KEY. `timeout` bounds connecting and each wait for data (a call's own `timeout=` bounds the
    whole call); refused connections, 429, 502, 503 and 504 are retried `retries` times with exponential
    back-off (at most `max_backoff` s), honouring Retry-After; a POST only under its Idempotency-Key."""

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        timeout: float = 60.0,
        retries: int = 5,
        max_backoff: float = 30.0,
    ) -> None:
        super().__init__(url, key, timeout, retries, max_backoff)
        self._http_client: httpx.AsyncClient | None = None

    @property
    def _http(self) -> httpx.AsyncClient:
        if self._http_client is None:
            self._http_client = httpx.AsyncClient(**self._http_options())
        return self._http_client

    async def aclose(self) -> None:
        """Close the kept connections (a later call opens new ones)."""
        if self._http_client is not None:
            await self._http_client.aclose()
        self._http_client = None

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- transport --------------------------------------------------------------------------------------
    async def _send(
        self, call: Call, *, stream: bool = False, read: float | None = None, timeout: float | None = None
    ) -> httpx.Response:
        """The answer to a call, retried as errors.retried says; an ApiError for a refusal. `stream`: its
        body is left for the caller to read, and the response to close."""
        with deadline_in(timeout) as deadline:
            until = deadline if timeout is not None else None

            async def attempt() -> httpx.Response:
                request = self._http.build_request(
                    call.method,
                    call.url,
                    headers=call.headers,
                    content=call.content,
                    timeout=self._attempt_timeout(read, until),
                )
                try:
                    response = await self._http.send(request, stream=stream)
                except httpx.TransportError as exc:
                    raise self._unreachable(exc) from exc
                if response.status_code >= 400:
                    await response.aread()
                    await response.aclose()
                    raise self._refusal(response)
                return response

            return await AsyncRetrying(**self._retry_policy(call))(attempt)

    async def _json(self, method: str, path: str, timeout: float | None = None, **call: Any) -> Any:
        sent = self._call(method, path, **call)
        return self._decoded(sent, await self._send(sent, timeout=timeout))

    # -- jobs -------------------------------------------------------------------------------------------
    @overload
    async def submit(self, kind: Kind[P, R], params: P, **options: Unpack[SubmitOptions]) -> Job[P, R]: ...
    @overload
    async def submit(
        self, kind: str, params: Mapping[str, Any] | None = None, **options: Unpack[SubmitOptions]
    ) -> Job[Any, Any]: ...
    async def submit(
        self, kind: str | Kind[Any, Any], params: Any = None, **options: Unpack[SubmitOptions]
    ) -> Any:
        """Submit a job (`kind`: its name, or a zolve_client.kinds Kind, which types the job); returns it,
        queued, or already succeeded when served from the cache. `options`: see SubmitOptions."""
        body = submit_body(kind, {"params": params or {}}, options)
        headers = idempotency(options.get("idempotency_key"))
        return await self._json("POST", "jobs", options.get("timeout"), body=body, headers=headers)

    @overload
    async def get(self, job_id: Job[P, R], wait: float = 0, *, timeout: float | None = None) -> Job[P, R]: ...
    @overload
    async def get(self, job_id: str, wait: float = 0, *, timeout: float | None = None) -> Job[Any, Any]: ...
    async def get(self, job_id: str | Job[Any, Any], wait: float = 0, *, timeout: float | None = None) -> Any:
        """The job (`job_id`: its id, or the job itself, whose type carries over); `wait` seconds: a
        long-poll, answered as soon as the job ends."""
        params = {"wait": wait} if wait else None
        return await self._json("GET", f"jobs/{job_id_of(job_id)}", timeout, params=params)

    @overload
    async def cancel(self, job_id: Job[P, R], *, timeout: float | None = None) -> Job[P, R]: ...
    @overload
    async def cancel(self, job_id: str, *, timeout: float | None = None) -> Job[Any, Any]: ...
    async def cancel(self, job_id: str | Job[Any, Any], *, timeout: float | None = None) -> Any:
        return await self._json("POST", f"jobs/{job_id_of(job_id)}/cancel", timeout)

    @overload
    async def result(self, job_id: Job[P, R], timeout: float | None = None) -> R: ...
    @overload
    async def result(self, job_id: str, timeout: float | None = None) -> dict[str, Any]: ...
    async def result(self, job_id: str | Job[Any, Any], timeout: float | None = None) -> Any:
        """The job's result once it has succeeded (waiting for it, at most `timeout` s); JobFailed if it
        failed, was cancelled or expired."""
        job = await self.get(job_id_of(job_id))
        if not is_final(job):
            job = await self.wait(job, timeout=timeout)
        if job["state"] != "succeeded":
            raise JobFailed(job)
        return job.get("result")

    def iter_result_items(
        self, job_id: str | Job[Any, Any], page_size: int = 100, *, timeout: float | None = None
    ) -> AsyncIterator[Any]:
        """The items of a result too large to return whole, in order (`async for`): the list its `paged`
        names, which the result holds as None. NotFound for a result returned whole."""
        return self._pages(f"jobs/{job_id_of(job_id)}/result/items", {"limit": page_size}, timeout)

    def iter_jobs(
        self,
        states: Sequence[str] = (),
        kind: str | Kind[Any, Any] | Iterable[str | Kind[Any, Any]] | None = None,
        page_size: int = 100,
        *,
        timeout: float | None = None,
    ) -> AsyncIterator[Job[Any, Any]]:
        """Your jobs, newest first, narrowed by state and kind (any of those given) (`async for`)."""
        params = {"state": list(states), "kind": kind_names(kind), "limit": page_size}
        return self._pages("jobs", params, timeout)

    async def _pages(self, path: str, params: dict[str, Any], timeout: float | None) -> AsyncIterator[Any]:
        """The items of a keyset-paged listing, every page (see _flows.next_page), each page's request
        within `timeout` s."""
        following: dict[str, Any] | None = params
        while following is not None:
            page = await self._json("GET", path, timeout, params=following)
            for item in page.get("items") or []:
                yield item
            following = next_page(following, page)

    async def _rows_link(self, job_id: str, link: str) -> str:
        job = await self.get(job_id)
        path = (job.get("links") or {}).get(link)
        if path is None:
            raise NoRows(f"job {job_id} ({job.get('kind')}) stores no rows to export")
        return str(path)

    async def iter_rows(
        self,
        job_id: str | Job[Any, Any],
        page_size: int = 1000,
        *,
        timeout: float | None = None,
        **filters: Any,
    ) -> AsyncIterator[dict[str, Any]]:
        """Every stored row of a job whose kind stores rows ({code, <item>}: an enumeration's boards or
        solutions), narrowed by the kind's filters (e.g. x=3: Planet X in sector 3); NoRows for a kind
        that stores none."""
        path = await self._rows_link(job_id_of(job_id), "rows")
        async for row in self._pages(path, {"limit": page_size, **filters}, timeout):
            yield row

    # -- events -----------------------------------------------------------------------------------------
    def events(
        self,
        job_id: str | Job[Any, Any] | None = None,
        last_event_id: int | None = None,
        *,
        timeout: float | None = None,
        **filters: Any,
    ) -> AsyncIterator[Event]:
        """A job's events (or, without `job_id`, all of yours, narrowed by kind, state, batch; a job's
        stream takes no filters: Invalid) as they happen. A dropped connection, or one the server ends
        after its `stream_max_seconds`, is resumed with Last-Event-ID; a job's stream ends after its final
        state; WaitTimeout once `timeout` s have passed."""
        job = None if job_id is None else job_id_of(job_id)
        feed = self._feed(job, last_event_id, deadline_after(timeout), filters)
        return (event async for event in feed if event is not None)

    async def _feed(
        self, job_id: str | None, last: int | None, deadline: float | None, filters: dict[str, Any]
    ) -> AsyncGenerator[Event | None, None]:
        """Events, and None for every keepalive, over as many connections as it takes; WaitTimeout once
        `deadline` (monotonic) has passed."""
        path = f"jobs/{job_id}/events" if job_id else "events"
        drops = 0
        while True:
            headers = {"Accept": "text/event-stream"}
            if last is not None:
                headers["Last-Event-ID"] = str(last)
            call = self._call("GET", path, params=filters or None, headers=headers)
            try:
                response = await self._send(call, stream=True, read=self._read_timeout(deadline))
                try:
                    async for event in aframes(response.aiter_bytes()):
                        check(deadline)
                        if event is not None:
                            last, drops = event.id, 0
                        yield event
                        if job_id and event is not None and event.event in FINAL_STATES:
                            return
                finally:
                    await response.aclose()
                # the server ended the stream: its time limit, or the job had ended (a long-poll reads
                # the job fresh, past the API's short cache, and answers at once if it has)
                if job_id and is_final(await self.get(job_id, wait=1)):
                    return
            except httpx.TransportError as exc:  # cut off mid-way: resumed with Last-Event-ID
                check(deadline)
                drops += 1
                if drops > self.retries:
                    raise Unreachable(f"the event stream of {self.url} keeps dropping") from exc
                await asyncio.sleep(min(0.2 * 2**drops, self.max_backoff))
            check(deadline)

    @overload
    async def wait(
        self,
        job_id: Job[P, R],
        timeout: float | None = None,
        every: float = 5.0,
        poll: float = 2.0,
        show_progress: bool = False,
        on_update: OnUpdate | None = None,
    ) -> Job[P, R]: ...
    @overload
    async def wait(
        self,
        job_id: str,
        timeout: float | None = None,
        every: float = 5.0,
        poll: float = 2.0,
        show_progress: bool = False,
        on_update: OnUpdate | None = None,
    ) -> Job[Any, Any]: ...
    async def wait(
        self,
        job_id: str | Job[Any, Any],
        timeout: float | None = None,
        every: float = 5.0,
        poll: float = 2.0,
        show_progress: bool = False,
        on_update: OnUpdate | None = None,
    ) -> Any:
        """Wait for the job to finish, at most `timeout` s (WaitTimeout), and return its final resource:
        told by its event stream, or by long-polls (`poll` s each) when the service refuses a stream. Silent
        unless asked: `show_progress=True` writes its state and progress to stderr at most every `every` s
        (ProgressReporter, as the CLI does); `on_update` gets each newer view of the job."""
        job = job_id_of(job_id)
        with deadline_in(timeout) as deadline:
            try:
                with Updates(job, every if show_progress else None, on_update) as update:
                    return await self._wait(job, timeout, deadline, poll, update)
            except RETRIED as busy:  # retried until the next try would come after the deadline
                if deadline is None:
                    raise
                raise WaitTimeout(
                    f"job {job}: the service was still busy ({busy}) at the {timeout:g}-s timeout"
                ) from busy

    async def _wait(
        self, job_id: str, timeout: float | None, deadline: float | None, poll: float, update: Updates
    ) -> Job[Any, Any]:
        job = await self.get(job_id)
        update(job)
        if is_final(job):
            return job
        try:
            return await self._wait_streaming(job, deadline, update)
        except WaitTimeout:
            raise WaitTimeout(f"job {job_id} had not finished after {timeout:g} s") from None
        except (RateLimited, NotFound, Unreachable):
            pass  # no stream to be had: long-polls
        while not is_final(job):
            job = await self.get(job_id, wait=poll_wait(job, poll, deadline, timeout))
            update(job)
        return job

    async def _wait_streaming(
        self, job: Job[Any, Any], deadline: float | None, update: Updates
    ) -> Job[Any, Any]:
        watch = Watch(job, update)
        async with contextlib.aclosing(self._feed(job["id"], None, deadline, {})) as feed:
            async for event in feed:
                if event is not None and watch.see(event):
                    break
        # a long-poll reads the job fresh (a plain GET may be served from the API's short cache)
        final = await self.get(job["id"], wait=5)
        update(final)
        return final

    # -- exports ----------------------------------------------------------------------------------------
    async def export(
        self, job_id: str | Job[Any, Any], fmt: str, output: IO[str], show_progress: bool = False
    ) -> int:
        """Stream a job's rows (Planet X: its boards) into `output` (a text file), from the export the
        job links to (`fmt`: csv or ndjson); returns how many rows were written. `show_progress=True`
        shows their count on stderr (as the CLI does): a bar with rich installed, else a line now and then."""
        path = await self._rows_link(job_id_of(job_id), fmt)
        response = await self._send(self._call("GET", path), stream=True)
        try:
            with RowsWriter(output, path, fmt, response.headers, show_progress) as rows:
                async for chunk in response.aiter_bytes(1 << 18):
                    rows.write(chunk)
                return rows.rows()
        finally:
            await response.aclose()

    # -- batches ----------------------------------------------------------------------------------------
    @overload
    async def submit_batch(
        self, kind: Kind[P, R], items: Sequence[BatchItemCreate[P]], **options: Unpack[BatchOptions]
    ) -> Batch[R]: ...
    @overload
    async def submit_batch(
        self, kind: str, items: Sequence[BatchItemCreate[Any]], **options: Unpack[BatchOptions]
    ) -> Batch[Any]: ...
    async def submit_batch(
        self, kind: str | Kind[Any, Any], items: Sequence[Any], **options: Unpack[BatchOptions]
    ) -> Any:
        """Submit up to 500 requests ({client_id, params}) of one kind; returns the batch. `options`: each
        of its jobs', as in submit (BatchOptions); the same `idempotency_key` again (after a dropped
        answer, say) returns the same batch."""
        body = submit_body(kind, {"items": list(items)}, options)
        headers = idempotency(options.get("idempotency_key"))
        return await self._json("POST", "batches", options.get("timeout"), body=body, headers=headers)

    async def cancel_batch(self, batch_id: str, *, timeout: float | None = None) -> Batch[Any]:
        """Cancel every job of the batch not yet finished (queued ones never start, running ones stop
        within about a second); returns the batch as it is then."""
        batch: Batch[Any] = await self._json("POST", f"batches/{batch_id}/cancel", timeout)
        return batch

    async def get_batch(self, batch_id: str, *, timeout: float | None = None) -> Batch[Any]:
        """The batch with its counts (and its first item: iter_batch_items() reads them all)."""
        batch: Batch[Any] = await self._json("GET", f"batches/{batch_id}", timeout, params={"limit": 1})
        return batch

    def iter_batch_items(
        self, batch_id: str, states: Sequence[str] = (), page_size: int = 100, *, timeout: float | None = None
    ) -> AsyncIterator[BatchItem[Any]]:
        """The batch's items in submission order, with their state and result (`async for`)."""
        params = {"limit": page_size, "state": list(states) or None}
        return self._pages(f"batches/{batch_id}", params, timeout)

    # -- webhooks ---------------------------------------------------------------------------------------
    async def webhook_secret(self, rotate: bool = False, *, timeout: float | None = None) -> str:
        """The secret your webhook deliveries are signed with (`rotate`: a new one from now on)."""
        path = "webhooks/secret/rotate" if rotate else "webhooks/secret"
        answer = await self._json("POST" if rotate else "GET", path, timeout)
        return str(answer["secret"])

    async def deliveries(
        self, job_id: str | Job[Any, Any], *, timeout: float | None = None
    ) -> list[Delivery]:
        """The job's webhook deliveries, each with every attempt (status, latency, reason)."""
        answer = await self._json("GET", f"jobs/{job_id_of(job_id)}/deliveries", timeout)
        items: list[Delivery] = answer["items"]
        return items
