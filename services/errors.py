"""Domain errors. Each carries the HTTP status the API answers with, a message, and field errors where a
field is at fault; the dashboard shows the message, the CLI prints it."""

from __future__ import annotations

from typing import Any

INVALID = "the request is invalid; see errors for each field"


class ServiceError(Exception):
    status = 400

    def __init__(self, message: str, errors: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.errors = errors


class NotFound(ServiceError):
    """No such thing, or not the caller's (the two are not told apart)."""

    status = 404


class Conflict(ServiceError):
    """The thing exists but its state forbids the action (e.g. cancelling a finished job)."""

    status = 409


class TooMany(ServiceError):
    """A quota of the caller's is used up: retry once some of its work has finished."""

    status = 429
    retry_after = 10


class Invalid(ServiceError):
    """The request is well-formed but a field's value is refused."""

    status = 422

    def __init__(self, errors: dict[str, Any], message: str = INVALID) -> None:
        super().__init__(message, errors)
