"""What the client raises: every refusal of the API is an ApiError subclass carrying its status, message
and field messages (`errors`, keyed like the request)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zolve_client.models import Job


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


class NotConnected(Unreachable):
    """No connection could be made (refused, no route, a name that does not resolve): nothing was sent."""


class ConnectionDropped(Unreachable):
    """The connection broke once the request was on its way (reset, closed before the answer): the service
    may have acted on it."""


class TimedOut(Unreachable):
    """The service did not answer within the timeout."""


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


class BadGateway(ApiError):
    status = 502


class Unavailable(ApiError):
    status = 503


class GatewayTimeout(ApiError):
    status = 504


class JobFailed(ApiError):
    """A job asked for its result ended failed or cancelled; `job` is its final resource."""

    def __init__(self, job: Job[Any, Any]) -> None:
        error = job.get("error") or {}
        super().__init__(f"job {job['id']} {job['state']}: {error.get('message') or ''}".rstrip(": "))
        self.job = job


class WaitTimeout(ApiError):
    """The job had not finished within the time the caller gave it."""


class NoRows(ApiError):
    """The job's kind stores no rows (only some kinds do, e.g. Planet X's boards)."""


_ERRORS: dict[int, type[ApiError]] = {
    error.status: error
    for error in (
        *(BadRequest, Unauthorized, NotFound, Conflict, TooLarge, Invalid),
        *(RateLimited, BadGateway, Unavailable, GatewayTimeout),
    )
}

#: failures the client tries again: any request after these (it was not acted on) ...
NOT_ACTED_ON = (NotConnected, RateLimited, Unavailable)
#: ... and a GET or a POST under an Idempotency-Key after these too (it may have been)
MAYBE_ACTED_ON = (BadGateway, GatewayTimeout, ConnectionDropped)
#: every failure the client retries
RETRIED = (*NOT_ACTED_ON, *MAYBE_ACTED_ON)


def retried(error: BaseException, idempotent: bool) -> bool:
    """Whether a failed attempt is worth another: a refused connection or an answer that says the request
    was not acted on always is; one that may have been acted on only when repeating it is harmless."""
    if isinstance(error, NOT_ACTED_ON):
        return True
    return idempotent and isinstance(error, MAYBE_ACTED_ON)


def seconds_after(value: str | None) -> float | None:
    """A Retry-After header's wait: seconds, or an HTTP date (none for anything else)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - datetime.now(UTC)).total_seconds()) if when.tzinfo else None


def error_of(status: int, reason: str | None, headers: Mapping[str, str], body: bytes) -> ApiError:
    """The ApiError of a refusal: its JSON body's message and field errors (or the start of its text)."""
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        parsed = {"message": body[:200].decode("utf-8", "replace")}
    if not isinstance(parsed, dict):
        parsed = {"message": str(parsed)[:200]}
    error_type = _ERRORS.get(status, ApiError)
    return error_type(
        str(parsed.get("message") or reason or f"HTTP {status}"),
        parsed.get("errors"),
        status=status,
        retry_after=seconds_after(headers.get("Retry-After")),
    )
