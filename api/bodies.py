"""Request bodies are JSON. webargs reads a body sent as another type (text/plain, a form) as no body at
all, so a valid JSON document under the wrong Content-Type came back as "kind: Missing data for required
field"; the API's blueprints answer it with a 415 that says what to send instead."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import flask
import flask_smorest
from flask_smorest import abort
from marshmallow import Schema
from webargs.flaskparser import FlaskParser, is_json_request

NOT_JSON = "the request body must be JSON: send it with Content-Type: application/json"


class JsonBodyParser(FlaskParser):
    def _raw_load_json(self, req: flask.Request) -> Any:
        if req.get_data(cache=True) and not is_json_request(req):
            abort(415, message=f"{NOT_JSON} (it was {req.mimetype or 'not given'})")
        return super()._raw_load_json(req)

    def _handle_invalid_json_error(
        self, error: json.JSONDecodeError | UnicodeDecodeError, req: flask.Request, *args: Any, **kwargs: Any
    ) -> NoReturn:
        abort(400, message=invalid_json_message(error))
        raise AssertionError("abort() raises")  # flask-smorest's abort is untyped: say it never returns


def invalid_json_message(error: ValueError) -> str:
    """Where a body stopped being JSON: its byte if it is not UTF-8, else the line and column (webargs'
    own answer named neither, and Werkzeug's default text took its place)."""
    cause = error.__cause__ if isinstance(error.__cause__, UnicodeDecodeError) else error
    if isinstance(cause, UnicodeDecodeError):
        return f"the body is not UTF-8 text: byte {cause.start + 1} ({cause.reason})"
    if isinstance(cause, json.JSONDecodeError):
        return f"the body is not valid JSON: {cause.msg} at line {cause.lineno}, column {cause.colno}"
    return "the body is not valid JSON"


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's Blueprint whose JSON bodies must say they are JSON (a 415 otherwise), and whose
    arguments' schemas are made once: webargs makes a schema given as a class anew for every request
    (a status poll's empty query parsed in 21 µs, 9 µs with the schema made once)."""

    ARGUMENTS_PARSER = JsonBodyParser()

    def arguments(self, schema: type[Schema] | Schema, *args: Any, **kwargs: Any) -> Any:
        return super().arguments(schema() if isinstance(schema, type) else schema, *args, **kwargs)
