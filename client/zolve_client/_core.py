"""What Client and AsyncClient share, with no I/O of its own: their settings (from the environment where not
given), requests as built, the one retry policy (tenacity) and refusals as read. Each client sends with its
own httpx client, blocking or async."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib.metadata
import json
import os
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict
from urllib.parse import urlencode, urljoin

import httpx
from tenacity import RetryCallState, retry_if_exception, wait_exponential

from zolve_client.errors import (
    ApiError,
    ConnectionDropped,
    NotConnected,
    TimedOut,
    Unreachable,
    error_of,
    retried,
)
from zolve_client.kinds import Kind

#: where a client goes when neither its `url` nor ZOLVE_URL says
DEFAULT_URL = "http://127.0.0.1:8000"
#: the monotonic time the caller's call ends (a wait()'s, or a `timeout=` one's): no retry is made whose
#: back-off would end after it
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


class SubmitOptions(TypedDict, total=False):
    """How a job is run: `time_limit` solve seconds; `fresh` solves again what the cache holds;
    `priority` (-100 to 100) orders your own waiting work; a job not started within `queue_timeout` s
    ends `expired`; `callback_url` is POSTed its final state; `idempotency_key` names the submission
    (the same key again returns the same job; without one the client makes one per call, which its own
    retries reuse); `timeout` bounds the call, retries included."""

    time_limit: float | None
    fresh: bool
    priority: int
    queue_timeout: float | None
    callback_url: str | None
    idempotency_key: str | None
    timeout: float | None


class BatchOptions(TypedDict, total=False):
    """SubmitOptions for each of a batch's jobs (no `fresh`)."""

    time_limit: float | None
    priority: int
    queue_timeout: float | None
    callback_url: str | None
    idempotency_key: str | None
    timeout: float | None


@functools.cache
def _version() -> str:
    try:
        return importlib.metadata.version("zolve-client")
    except importlib.metadata.PackageNotFoundError:  # imported from a checkout, not installed
        return "0"


@dataclass(frozen=True)
class Call:
    """One request as each of its attempts sends it."""

    method: str
    url: str
    headers: Mapping[str, str]
    content: bytes | None = None

    @property
    def idempotent(self) -> bool:
        """Whether sending it twice does what sending it once does: a GET, or a POST under a key."""
        return self.method == "GET" or "Idempotency-Key" in self.headers


@contextlib.contextmanager
def deadline_in(seconds: float | None) -> Iterator[float | None]:
    """Within it, no retry outlasts `seconds` from now (nor an outer deadline); yields the deadline."""
    outer = _DEADLINE.get()
    if seconds is None:
        yield outer
        return
    deadline = time.monotonic() + seconds
    if outer is not None:
        deadline = min(deadline, outer)
    token = _DEADLINE.set(deadline)
    try:
        yield deadline
    finally:
        _DEADLINE.reset(token)


def job_id_of(job: str | Mapping[str, object]) -> str:
    """A job's id, from the id or the job itself."""
    return job if isinstance(job, str) else str(job["id"])


def kind_name(kind: str | Kind[Any, Any]) -> str:
    return kind if isinstance(kind, str) else kind.name


def kind_names(kind: str | Kind[Any, Any] | Iterable[str | Kind[Any, Any]] | None) -> list[str]:
    """The names of a kind filter: none, one kind, or several (any of them)."""
    if kind is None:
        return []
    if isinstance(kind, (str, Kind)):
        return [kind_name(kind)]
    return [kind_name(each) for each in kind]


def submit_body(
    kind: str | Kind[Any, Any], content: Mapping[str, Any], options: Mapping[str, object]
) -> dict[str, Any]:
    """A POST /jobs or /batches body: the kind, its params or items, and the options not at their default
    (`timeout` and `idempotency_key` go elsewhere)."""
    given = {
        "time_limit": options.get("time_limit"),
        "queue_timeout": options.get("queue_timeout"),
        "callback_url": options.get("callback_url"),
        "priority": options.get("priority") or None,
        "fresh": options.get("fresh") or None,
    }
    chosen = {name: value for name, value in given.items() if value is not None}
    return {"kind": kind_name(kind), **content, **chosen}


def idempotency(key: str | None) -> dict[str, str]:
    """The header a POST is retried under: the caller's key, else a new one for this call alone."""
    return {"Idempotency-Key": key or f"zolve-client-{uuid.uuid4()}"}


class Base:
    """A client's settings and everything it does short of sending."""

    def __init__(
        self,
        url: str | None = None,
        key: str | None = None,
        timeout: float = 60.0,
        retries: int = 5,
        max_backoff: float = 30.0,
    ) -> None:
        self.url = (url or os.environ.get("ZOLVE_URL") or DEFAULT_URL).rstrip("/")
        key = key or os.environ.get("ZOLVE_API_KEY")
        if not key:
            raise ValueError("no API key: pass key=..., or set ZOLVE_API_KEY")
        self.timeout, self.retries, self.max_backoff = timeout, retries, max_backoff
        self._headers = {"Authorization": f"Bearer {key}", "User-Agent": f"zolve-client/{_version()}"}

    def _http_options(self) -> dict[str, Any]:
        """The httpx client's: no redirects followed (a refusal is ours to read), up to 10 connections kept
        (threads sharing a client, or a wait() whose stream and polls overlap, reuse them)."""
        limits = httpx.Limits(max_keepalive_connections=10)
        return {"headers": self._headers, "limits": limits, "follow_redirects": False}

    def _call(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Call:
        """Our own paths are relative to the base URL, a link the API gave is a path from the host; a list
        parameter is repeated, a None one left out (never sent as "None")."""
        url = path if path.startswith("http") else urljoin(self.url + "/", path)
        given = {name: value for name, value in (params or {}).items() if value is not None}
        if given:
            url += ("&" if "?" in url else "?") + urlencode(given, doseq=True)
        sent = dict(headers or {})
        content = None
        if body is not None:
            content = json.dumps(body).encode()
            sent["Content-Type"] = "application/json"
        return Call(method, url, sent, content)

    def _attempt_timeout(self, read: float | None, until: float | None) -> httpx.Timeout:
        """An attempt's: the client's timeout (or `read` for a stream's silences), cut to the time left
        before `until` (a call's own timeout)."""
        seconds, silence = self.timeout, read or self.timeout
        if until is not None:
            left = max(0.05, until - time.monotonic())
            seconds, silence = min(seconds, left), min(silence, left)
        return httpx.Timeout(seconds, read=silence)

    def _unreachable(self, error: httpx.TransportError) -> Unreachable:
        """The failure of an exchange that had no answer: no connection (nothing sent), timed out, dropped
        once the request was on its way, or a request httpx would not send."""
        if isinstance(error, httpx.TimeoutException):
            return TimedOut(f"{self.url} did not answer in time ({error!r})")
        if isinstance(error, httpx.ConnectError):
            return NotConnected(f"cannot reach {self.url}: is the service running? ({error})")
        if isinstance(error, httpx.ReadError | httpx.WriteError | httpx.RemoteProtocolError):
            return ConnectionDropped(f"the connection to {self.url} broke ({error!r})")
        return Unreachable(f"cannot send to {self.url} ({error!r})")

    def _wait_seconds(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, ApiError) and error.retry_after is not None:
            return min(error.retry_after, self.max_backoff)
        return float(wait_exponential(multiplier=0.5, max=self.max_backoff)(state))

    def _retry_policy(self, call: Call) -> dict[str, Any]:
        """tenacity's arguments for one call: which failures are retried (errors.retried), the back-off
        (Retry-After where the service says), and when to stop: after `retries` retries, or when the
        back-off would outlast the caller's deadline."""
        deadline = _DEADLINE.get()

        def stop(state: RetryCallState) -> bool:
            if state.attempt_number > self.retries:
                return True
            return deadline is not None and time.monotonic() + self._wait_seconds(state) > deadline

        return {
            "retry": retry_if_exception(lambda error: retried(error, call.idempotent)),
            "wait": self._wait_seconds,
            "stop": stop,
            "reraise": True,
        }

    @staticmethod
    def _refusal(response: httpx.Response) -> ApiError:
        return error_of(response.status_code, response.reason_phrase, response.headers, response.content)

    @staticmethod
    def _decoded(call: Call, response: httpx.Response) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            not_json = f"{call.method} {call.url}: the answer is not JSON"
            raise ApiError(not_json, status=response.status_code) from exc

    @staticmethod
    def _read_timeout(deadline: float | None) -> float:
        """How long a stream may stay silent: a minute, or until just past the caller's deadline."""
        if deadline is None:
            return 60.0
        return max(0.1, min(60.0, deadline - time.monotonic() + 0.1))
