"""Request bodies are JSON. webargs reads a body sent as another type (text/plain, a form) as no body at
all, so a valid JSON document under the wrong Content-Type came back as "kind: Missing data for required
field"; the API's blueprints answer it with a 415 that says what to send instead, as they answer a body
sent compressed (Content-Encoding). A query parameter that takes one value, given twice, is a 422."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import flask
import flask_smorest
from flask_smorest import abort
from marshmallow import Schema, fields
from webargs.flaskparser import FlaskParser, is_json_request

NOT_JSON = "the request body must be JSON: send it with Content-Type: application/json"


class JsonBodyParser(FlaskParser):
    def _raw_load_json(self, req: flask.Request) -> Any:
        if req.get_data(cache=True) and not is_json_request(req):
            abort(415, message=f"{NOT_JSON} (it was {req.mimetype or 'not given'})")
        encoding = req.headers.get("Content-Encoding", "").strip().lower()
        if encoding not in ("", "identity"):  # gzip would be read as text: "not UTF-8"; plain text taken
            shown = encoding[:40]
            abort(415, message=f"send the request body as it is (Content-Encoding {shown} is not taken)")
        return super()._raw_load_json(req)

    def load_querystring(self, req: flask.Request, schema: Schema) -> Any:
        """The query, where a parameter that takes one value is given once (webargs would take the first
        of `?limit=1&limit=2` unsaid)."""
        repeated = {
            name: ["given more than once: give it once"]
            for name, field in schema.fields.items()
            if not isinstance(field, fields.List) and len(req.args.getlist(field.data_key or name)) > 1
        }
        if repeated:
            abort(422, errors={"query": repeated})
        return super().load_querystring(req, schema)

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
    arguments' schemas are made once: webargs makes a schema given as a class anew for every request,
    which costs a status poll more than parsing its query."""

    ARGUMENTS_PARSER = JsonBodyParser()

    def arguments(self, schema: type[Schema] | Schema, *args: Any, **kwargs: Any) -> Any:
        return super().arguments(schema() if isinstance(schema, type) else schema, *args, **kwargs)
