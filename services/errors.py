"""Domain errors: what went wrong, in the use case's words: a message, and field errors where a field is
at fault. The front ends choose how to say it: the API an HTTP status (api.errors.STATUSES), the
dashboard a flash or its page's status, the CLI its exit."""

from __future__ import annotations

from typing import Any

INVALID = "the request is invalid; see errors for each field"


class ServiceError(Exception):
    def __init__(self, message: str, errors: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors


class NotFound(ServiceError):
    """No such thing, or not the caller's (the two are not told apart)."""


class Conflict(ServiceError):
    """The thing exists but its state forbids the action (e.g. cancelling a finished job)."""


class TooMany(ServiceError):
    """A quota of the caller's is used up: retry once some of its work has finished."""

    #: seconds after which a retry may succeed
    retry_after = 10


class Invalid(ServiceError):
    """The request is well-formed but a field's value is refused."""

    def __init__(self, errors: dict[str, Any], message: str = INVALID) -> None:
        super().__init__(message, errors)
