"""Every error is JSON `{code, status, message, errors?}`: never a traceback, never a 500 for bad input."""

from __future__ import annotations

import json
import logging
import time
from http import HTTPStatus
from typing import Any, NoReturn

from flask import Flask, Response, jsonify, request
from flask_smorest import abort
from sqlalchemy.exc import DataError, DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException

from api.bodies import NOT_JSON
from api.extension import zolve
from core.outages import Outage, one_line
from services.errors import Conflict, Invalid, NotFound, ServiceError, TooMany
from services.outages import database_away

log = logging.getLogger("zolve.api")


def seconds_until_reset() -> int:
    """For a 429 of the submit limit: how long until the breached limit's window resets."""
    limiter = zolve().limiter
    limit = limiter.current_limit if limiter is not None else None
    return max(1, int(limit.reset_at - time.time())) if limit is not None else 1


def abort_with(code: int, **data: Any) -> NoReturn:
    """flask-smorest's abort (a JSON error answer), typed as what it is: it never returns."""
    abort(code, **data)
    raise AssertionError("abort() raises")


def error_response(
    code: int, message: str, errors: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> Response:
    body: dict[str, Any] = {"code": code, "status": HTTPStatus(code).phrase, "message": message}
    if errors:
        body["errors"] = errors
    response = jsonify(body)
    response.status_code = code
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _field_errors(error: HTTPException) -> dict[str, Any] | None:
    """webargs puts messages under their location ({"json": {...}}); clients want the fields."""
    data = getattr(error, "data", None) or {}
    if data.get("errors"):
        field_errors: dict[str, Any] = data["errors"]
        return field_errors
    messages = data.get("messages")
    if not messages:
        return None
    merged: dict[str, Any] = {}
    for location_errors in messages.values():
        merged.update(location_errors if isinstance(location_errors, dict) else {"_schema": location_errors})
    return merged


_MESSAGES = {
    401: "a valid API key is required: Authorization: Bearer <key>",
    404: "not found",
    405: "method not allowed",
    413: "request body too large",
    415: NOT_JSON,
    422: "the request is invalid; see errors for each field",
}


def handle_http_exception(error: HTTPException) -> Response:
    code = error.code or 500
    errors = _field_errors(error)
    message = getattr(error, "data", {}).get("message") or _MESSAGES.get(code) or (error.description or "")
    headers = dict(getattr(error, "data", {}).get("headers") or {})
    if code == 429:
        headers.setdefault("Retry-After", str(seconds_until_reset()))
    if code == 405 and error.get_headers():
        headers.update({k: v for k, v in error.get_headers() if k == "Allow"})
    return error_response(code, message, errors, headers)


#: the HTTP status of each domain error (services.errors), chosen here at the edge
STATUSES: dict[type[ServiceError], int] = {NotFound: 404, Conflict: 409, TooMany: 429, Invalid: 422}


def status_of(error: ServiceError) -> int:
    """The HTTP status that says this domain error (its class's, or its nearest base's)."""
    return next((STATUSES[cls] for cls in type(error).__mro__ if cls in STATUSES), 400)


def handle_service_error(error: ServiceError) -> Response:
    headers = {"Retry-After": str(error.retry_after)} if isinstance(error, TooMany) else None
    return error_response(status_of(error), error.message, error.errors, headers)


def handle_database_error(error: DBAPIError) -> Response:
    if isinstance(error, DataError):  # e.g. a NUL character, which PostgreSQL text cannot hold
        return error_response(422, "the request holds a value that cannot be stored (e.g. a NUL character)")
    if not isinstance(error, OperationalError | InterfaceError) and not error.connection_invalidated:
        return handle_unexpected(error)
    if database_away(error):
        DATABASE_OUTAGE.failed(error)
    else:  # a statement timeout, a deadlock: the server answered, no outage to open
        log.warning("database error, answered 503: %s", one_line(error))
    return error_response(503, "the database is unavailable; retry shortly", headers={"Retry-After": "2"})


#: per API process: the first 503 of an outage says it, and the first new connection after says it ended
#: (api.app connects it to the database's connections); every 503 between is counted, not logged
DATABASE_OUTAGE = Outage(
    log, "reaching the database", transient=lambda _: True, meanwhile="answering 503 until it works"
)


class RunAgain(Exception):
    """Raised by a view that asked the edge to run its request again (core.waiting.Rerun): this run's
    answer is dropped, so it is an empty one, past every decorator (an ETag's, a schema's)."""


def run_again() -> NoReturn:
    raise RunAgain


def handle_run_again(_: RunAgain) -> Response:
    return Response(status=204)


def handle_pool_timeout(error: PoolTimeout) -> Response:
    """Every connection of the process's pool stayed busy for the pool's timeout: the service is loaded,
    not broken, and the client is told to come back (never a 500 with a traceback)."""
    log.warning("no database connection free in time: %s", error.__class__.__name__)
    return error_response(503, "the service is busy; retry shortly", headers={"Retry-After": "1"})


def handle_unexpected(error: Exception) -> Response:
    if _unreadable_json_body(error):
        return error_response(400, "unreadable JSON body: nested too deeply, or a number over 4,300 digits")
    log.exception("unhandled error")
    return error_response(500, "internal error")


def _unreadable_json_body(error: Exception) -> bool:
    """json.loads raises ValueError past 4,300 digits and RecursionError on deep nesting, which webargs
    (catching only JSONDecodeError) passes on: the body's fault, not the service's. Read again only here."""
    if not isinstance(error, ValueError | RecursionError) or not request.is_json:
        return False
    try:
        json.loads(request.get_data(cache=True))
    except (ValueError, RecursionError):
        return True
    return False


def register_error_handlers(app: Flask) -> None:
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(ServiceError, handle_service_error)
    app.register_error_handler(DBAPIError, handle_database_error)
    app.register_error_handler(PoolTimeout, handle_pool_timeout)
    app.register_error_handler(RunAgain, handle_run_again)
    app.register_error_handler(Exception, handle_unexpected)
