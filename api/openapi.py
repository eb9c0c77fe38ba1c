"""The published contract: what flask-smorest makes of the blueprints, completed so that a client generated
from /openapi.json is as good as one written by hand (issue 38).

- every operation has a human operationId (`create_job`, `get_job`, ...) and a tag;
- every response the server can give is declared with its body: one `Error` schema for every 4xx and 5xx
  (401 and 429 on every operation that takes a key, 503 when the database is away, 413 and 415 where a
  body is read), and the non-JSON ones with their media types (SVG, CSV and NDJSON as binary, event
  streams as text);
- the headers the service depends on are declared: Idempotency-Key, Location, Retry-After, Link,
  ETag/If-None-Match, Last-Event-ID, X-Total-Count;
- a submit, a job and a batch are typed per kind: `JobCreate`, `Job` and `BatchCreate` are each a oneOf
  of one schema per kind (`DiceJobCreate`, `DiceJob`, `DiceBatchCreate`, ...) with a discriminator on
  `kind` (an enum of the kind's name alone), whose `params` and `result` are the kind's own schemas; what
  a params schema cannot say (its rules across fields, schemas.rules) is in its description.

`complete(spec, max_time_limit)` does the per-kind schemas once every blueprint is registered;
OperationsPlugin does the rest, operation by operation, as flask-smorest registers them.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from apispec import APISpec, BasePlugin

from api.media import OCTET_STREAM
from kinds import KINDS, Kind
from schemas.rules import cross_field_rules, describe_rules
from services.jobs import IDEMPOTENCY_KEY_MAX

#: (method, path) -> operationId; rows hooks' operations are named after their rows (rows_operation)
OPERATION_IDS: dict[tuple[str, str], str] = {
    ("get", "/health"): "get_health",
    ("get", "/ready"): "get_readiness",
    ("get", "/kinds"): "list_kinds",
    ("get", "/jobs"): "list_jobs",
    ("post", "/jobs"): "create_job",
    ("get", "/jobs/{job_id}"): "get_job",
    ("post", "/jobs/{job_id}/cancel"): "cancel_job",
    ("get", "/jobs/{job_id}/result/items"): "list_result_items",
    ("get", "/jobs/{job_id}/picture.svg"): "get_job_picture",
    ("post", "/batches"): "create_batch",
    ("get", "/batches/{batch_id}"): "get_batch",
    ("post", "/batches/{batch_id}/cancel"): "cancel_batch",
    ("get", "/batches/{batch_id}/results.ndjson"): "export_batch_results_ndjson",
    ("get", "/batches/{batch_id}/results.csv"): "export_batch_results_csv",
    ("get", "/metrics"): "get_metrics",
    ("get", "/jobs/{job_id}/events"): "stream_job_events",
    ("get", "/events"): "stream_events",
    ("get", "/jobs/{job_id}/deliveries"): "list_job_deliveries",
    ("get", "/webhooks/secret"): "get_webhook_secret",
    ("post", "/webhooks/secret/rotate"): "rotate_webhook_secret",
}
_ROWS_PATH = re.compile(r"^/jobs/\{job_id\}/(?P<name>[a-z][a-z0-9_]*)(?:\.(?P<fmt>csv|ndjson))?$")

#: operations anyone may call, without a key (no 401, no rate limit)
PUBLIC = {"get_health", "get_readiness", "list_kinds"}
#: operations that never touch the database (no 503)
NO_DATABASE = {"get_health"}

ERROR = {"$ref": "#/components/schemas/Error"}
BINARY = {"type": "string", "format": "binary"}
TEXT = {"type": "string"}

_STATUS_TEXT = {
    400: "The request cannot be read (e.g. unreadable JSON)",
    401: "No API key, or not a valid one (`Authorization: Bearer <key>`)",
    403: "This key may not do this",
    404: "No such thing, or not yours",
    409: "The thing's state forbids this",
    413: "Request body too large",
    414: "Request line too long",
    415: "The body is not sent as application/json",
    422: "A field's value is refused: `errors` says which and why",
    429: "Too many requests, or a quota is used up: retry after `Retry-After` seconds",
    431: "Request headers too large",
    503: "The database or the broker is unavailable: retry after `Retry-After` seconds",
}

HEADERS: dict[str, dict[str, Any]] = {
    "Location": {"description": "the job's (or batch's) URL, to poll", "schema": TEXT},
    "Retry-After": {"description": "seconds to wait before trying again", "schema": {"type": "integer"}},
    "ETag": {
        "description": "this answer's tag: send it back as If-None-Match to poll cheaply",
        "schema": TEXT,
    },
    "Link": {"description": 'the next page: `<URL>; rel="next"` (none on the last page)', "schema": TEXT},
    "X-Total-Count": {
        "description": "how many rows the job stored (the export's filters not applied)",
        "schema": TEXT,
    },
    "X-Zolve-Cache": {"description": "`hit`: an identical job's result was served", "schema": TEXT},
    "Idempotent-Replayed": {
        "description": "`true`: an earlier request with the same Idempotency-Key made this job (or batch)",
        "schema": TEXT,
    },
}

IDEMPOTENCY_KEY = {
    "in": "header",
    "name": "Idempotency-Key",
    "required": False,
    "description": "repeat a submit safely: the same key and body answer what the first request made; "
    "the same key with another body is refused (422)",
    "schema": {"type": "string", "minLength": 1, "maxLength": IDEMPOTENCY_KEY_MAX},
}
IF_NONE_MATCH = {
    "in": "header",
    "name": "If-None-Match",
    "required": False,
    "description": "the ETag of the answer you hold: 304 with no body while it is still the answer",
    "schema": TEXT,
}
LAST_EVENT_ID = {
    "in": "header",
    "name": "Last-Event-ID",
    "required": False,
    "description": "resume after this event id (an `id:` this stream sent); wins over ?last_event_id=",
    "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"},
}


def operation_id(method: str, path: str) -> str | None:
    """The operation's human name, from the table or, for a kind's rows, from the rows' name."""
    if (method, path) in OPERATION_IDS:
        return OPERATION_IDS[(method, path)]
    rows = _ROWS_PATH.match(path)
    if rows and method == "get":
        return f"export_{rows['name']}_{rows['fmt']}" if rows["fmt"] else f"list_{rows['name']}"
    return None


def _complete_operation(method: str, path: str, operation: dict[str, Any]) -> None:
    name = operation_id(method, path)
    if name is not None:
        operation["operationId"] = name
    responses = {str(code): response for code, response in operation.get("responses", {}).items()}
    operation["responses"] = responses
    codes = {400, 414, 431}
    if name not in PUBLIC:
        codes |= {401, 429}
    if name not in NO_DATABASE:
        codes.add(503)
    if "requestBody" in operation:
        codes |= {413, 415, 422}
    for status in codes:
        responses.setdefault(str(status), {"description": _STATUS_TEXT[status]})
    for code, response in responses.items():  # every error (declared by a view or above) gets its body
        # a string or a $ref names a response component (flask-smorest's, with the Error body)
        if code.isdigit() and int(code) >= 400 and isinstance(response, dict) and "$ref" not in response:
            response.setdefault("content", {"application/json": {"schema": ERROR}})
            if int(code) in (429, 503):
                response.setdefault("headers", {})["Retry-After"] = HEADERS["Retry-After"]
    _media_types(path, responses)
    _headers(method, path, operation, responses)


#: what a path's 200 answers when it is not JSON, by how the path ends
_MEDIA_TYPES = {
    ".csv": ("text/csv", BINARY),
    ".ndjson": ("application/x-ndjson", BINARY),
    ".svg": ("image/svg+xml", BINARY),
    "/events": ("text/event-stream", TEXT),
    "/metrics": ("text/plain", TEXT),
}


def _media_types(path: str, responses: dict[str, Any]) -> None:
    """Non-JSON bodies as what they are: files as binary (a generated client hands back bytes, never
    parses them as JSON), an event stream and metrics as text."""
    ok = responses.get("200")
    ending = next((end for end in _MEDIA_TYPES if path.endswith(end)), None)
    if ending is None or not isinstance(ok, dict):
        return
    media_type, schema = _MEDIA_TYPES[ending]
    ok["content"] = {media_type: {"schema": schema}}
    if schema is BINARY:  # a file, also served as plain bytes to a client that asks (api.media)
        ok["content"][OCTET_STREAM] = {"schema": schema}


def _operations_on(placeholder: str) -> list[str]:
    """The operations that take any job's (`{job_id}`) or batch's (`{batch_id}`) id. A kind's rows
    (`/jobs/{job_id}/boards`, ...) are not among them: a job of another kind has none (404)."""
    return [name for (_, path), name in OPERATION_IDS.items() if placeholder in path]


def _links(placeholder: str) -> dict[str, Any]:
    """OpenAPI links from what makes a job (or batch) to the operations on it: a client (and a stateful
    fuzzer) learns that the id in the 202 is the `job_id` the other operations take."""
    parameter = placeholder.strip("{}")
    return {
        name: {"operationId": name, "parameters": {parameter: "$response.body#/id"}}
        for name in _operations_on(placeholder)
    }


def _headers(method: str, path: str, operation: dict[str, Any], responses: dict[str, Any]) -> None:
    def add(code: str, *names: str) -> None:
        if code in responses:
            headers = responses[code].setdefault("headers", {})
            headers.update({name: HEADERS[name] for name in names})

    if (method, path) == ("post", "/jobs"):
        operation.setdefault("parameters", []).append(IDEMPOTENCY_KEY)
        add("202", "Location", "X-Zolve-Cache", "Idempotent-Replayed")
        responses["202"]["links"] = _links("{job_id}")
    if (method, path) == ("post", "/batches"):
        operation.setdefault("parameters", []).append(IDEMPOTENCY_KEY)
        add("202", "Location", "Idempotent-Replayed")
        responses["202"]["links"] = _links("{batch_id}")
    if (method, path) == ("get", "/jobs"):
        add("200", "Link")
    if (method, path) in (("get", "/jobs/{job_id}"), ("get", "/batches/{batch_id}")):
        add("200", "Retry-After")  # not finished yet: poll again after this
    if (method, path) == ("get", "/jobs/{job_id}"):
        operation.setdefault("parameters", []).append(IF_NONE_MATCH)
        add("200", "ETag")
        responses["304"] = {"description": "Not Modified: the answer whose ETag If-None-Match names"}
    if path.endswith("/events"):
        operation.setdefault("parameters", []).append(LAST_EVENT_ID)
    if _ROWS_PATH.match(path) and path.endswith((".csv", ".ndjson")):
        add("200", "X-Total-Count")


class OperationsPlugin(BasePlugin):
    """Completes each operation as it is registered (apispec calls operation_helper once per path)."""

    def operation_helper(
        self, path: str | None = None, operations: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        for method, operation in (operations or {}).items():
            if method in ("get", "post", "put", "patch", "delete"):
                _complete_operation(method, path or "", operation)


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[._]", name))


def kind_job_schema(name: str) -> str:
    """The component that types a job of this kind, e.g. DiceJob, PlanetxEnumerateJob."""
    return f"{_pascal(name)}Job"


def kind_create_schema(name: str) -> str:
    """The component that types a submit of this kind, e.g. DiceJobCreate."""
    return f"{_pascal(name)}JobCreate"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(name: str, description: str) -> dict[str, Any]:
    return {"allOf": [_ref(name)], "nullable": True, "description": description}


def _typed(
    base: dict[str, Any], changes: dict[str, Any], required: tuple[str, ...], about: str
) -> dict[str, Any]:
    schema = copy.deepcopy(base)
    schema["properties"].update(changes)
    schema["required"] = sorted({*schema.get("required", []), *required})
    schema["description"] = about
    return schema


def _paged_result(schemas: dict[str, Any], kind: Kind) -> None:
    """A result too large to return whole keeps its list as rows: the list is then null and `paged` says
    where it went (store.results.split)."""
    result = schemas[kind.result_schema.__name__]
    result["properties"][kind.result_items]["nullable"] = True
    result["properties"]["paged"] = {
        "type": "object",
        "nullable": True,
        "description": f"`{kind.result_items}` was too large to return whole: page it at "
        "GET /jobs/{id}/result/items",
        "properties": {"field": {"type": "string"}, "count": {"type": "integer"}},
    }


def _one_of(schemas: dict[str, Any], name: str, by_kind: dict[str, str], about: str) -> None:
    mapping = {kind: f"#/components/schemas/{schema}" for kind, schema in by_kind.items()}
    schemas[name] = {
        "oneOf": [{"$ref": ref} for ref in mapping.values()],
        "discriminator": {"propertyName": "kind", "mapping": mapping},
        "description": about,
    }


def _kind_property(name: str) -> dict[str, Any]:
    return {"type": "string", "enum": [name], "description": "puzzle kind, see GET /kinds"}


def _params_required(kind: Kind) -> bool:
    """Params left out are {}: required in the document when the kind requires a field of them."""
    return any(field.required for field in kind.params_schema().fields.values())


def _describe_rules(schemas: dict[str, Any], kind: Kind) -> None:
    """The kind's rules across its params' fields, in its params schema's description."""
    rules = describe_rules(cross_field_rules(kind.params_schema))
    params = schemas[kind.params_schema.__name__]
    if rules and rules not in params.get("description", ""):  # a schema two kinds share is done once
        params["description"] = "\n\n".join(filter(None, [params.get("description"), rules]))


def _job_create(spec: APISpec, base: dict[str, Any], kind: Kind) -> str:
    """The component that types a submit of this kind (e.g. DiceJobCreate), named after it."""
    name = kind_create_schema(kind.name)
    changes = {"kind": _kind_property(kind.name), "params": _ref(kind.params_schema.__name__)}
    required = ("kind", "params") if _params_required(kind) else ("kind",)
    about = f"Submit a {kind.name} job: {kind.summary}"
    spec.components.schema(name, component=_typed(base, changes, required, about))
    return name


def _batch_create(spec: APISpec, base: dict[str, Any], item: dict[str, Any], kind: Kind) -> str:
    """The component that types a batch of this kind (e.g. DiceBatchCreate). An item's params are the
    kind's or any object: params the kind refuses make that item `rejected` in the batch's 202 (with its
    `errors`), never a 422 for the batch. The batch's kind may be left out for the default kind only."""
    pascal, params = _pascal(kind.name), kind.params_schema.__name__
    item_params = {
        "anyOf": [_ref(params), {"type": "object"}],
        "description": f"a {params}; params it refuses make the item `rejected`, with its `errors`",
    }
    about = f"A request in a batch of {kind.name} jobs"
    spec.components.schema(
        f"{pascal}BatchItemCreate", component=_typed(item, {"params": item_params}, ("client_id",), about)
    )
    kind_property = _kind_property(kind.name)
    default = base["properties"]["kind"].get("default")
    if kind.name == default:
        kind_property["default"] = default
    items = {**base["properties"]["items"], "items": _ref(f"{pascal}BatchItemCreate")}
    name = f"{pascal}BatchCreate"
    required = () if kind.name == default else ("kind",)
    changes = {"kind": kind_property, "items": items}
    spec.components.schema(
        name, component=_typed(base, changes, required, f"Submit a batch of {kind.name} jobs")
    )
    return name


def _creates_per_kind(spec: APISpec, max_time_limit: float) -> None:
    """`POST /jobs`' and `POST /batches`' bodies as a oneOf of one schema per kind, with a discriminator
    on `kind`: a job's params typed as its kind's (e.g. DiceJobCreate's params a DiceParams)."""
    schemas = spec.components.schemas
    job, batch = schemas.pop("JobCreate"), schemas.pop("BatchCreate")
    item = schemas.pop("BatchItemCreate")
    for create in (job, batch):  # the service's limit (ZOLVE_MAX_TIME_LIMIT)
        create["properties"]["time_limit"]["maximum"] = max_time_limit
    jobs, batches = {}, {}
    for name in sorted(KINDS):
        _describe_rules(schemas, KINDS[name])
        jobs[name] = _job_create(spec, job, KINDS[name])
        batches[name] = _batch_create(spec, batch, item, KINDS[name])
    _one_of(schemas, "JobCreate", jobs, "A job to submit: its kind says which of these it is (its params)")
    _one_of(schemas, "BatchCreate", batches, "A batch to submit: its kind says which of these it is")


def complete(spec: APISpec, max_time_limit: float) -> None:
    """Once every blueprint is registered: submits, jobs and batches typed per kind."""
    _creates_per_kind(spec, max_time_limit)
    _resources_per_kind(spec)
    # flask-smorest's, for a pagination header this API does not send (its pages carry next_cursor)
    spec.components.schemas.pop("PaginationMetadata", None)


def _resources_per_kind(spec: APISpec) -> None:
    """`Job` and `Batch` as a oneOf of one schema per kind (DiceJob, DiceBatch, ...), with a
    discriminator on `kind`: their params and results typed as the kind's."""
    schemas = spec.components.schemas
    # replaced by their per-kind forms below
    job, batch, item = schemas.pop("Job"), schemas.pop("Batch"), schemas.pop("BatchItem")
    jobs, batches = {}, {}
    for name in sorted(KINDS):
        kind, pascal = KINDS[name], _pascal(name)
        if kind.result_items:
            _paged_result(schemas, kind)
        result = _nullable(kind.result_schema.__name__, "the result, once the job succeeded")
        jobs[name] = kind_job_schema(name)
        spec.components.schema(
            jobs[name],
            component=_typed(
                job,
                {
                    "kind": {"type": "string", "enum": [name]},
                    "params": _ref(kind.params_schema.__name__),
                    "result": result,
                },
                ("id", "kind", "state", "params"),
                f"A {name} job: {kind.summary}",
            ),
        )
        spec.components.schema(
            f"{pascal}BatchItem", component=_typed(item, {"result": result}, ("client_id", "state"), "")
        )
        batches[name] = f"{pascal}Batch"
        items = {"type": "array", "items": _ref(f"{pascal}BatchItem")}
        spec.components.schema(
            batches[name],
            component=_typed(
                batch,
                {"kind": {"type": "string", "enum": [name]}, "items": items},
                ("id", "kind"),
                f"A batch of {name} jobs",
            ),
        )
    _one_of(schemas, "Job", jobs, "A job: its kind says which of these it is (its params' and result's type)")
    _one_of(schemas, "Batch", batches, "A batch: its kind says which of these it is (its items' results)")
