"""The published contract (issue 38): /openapi.json as a generated client needs it, checked on the document,
then from the outside: a Python client generated from the served document with openapi-python-client
(no generator warning allowed) runs a user's journey against a real server and worker, alone."""

from __future__ import annotations

import importlib
import json
import re
import sys
import time
from typing import Any

import pytest

from api.openapi import kind_create_schema, kind_job_schema
from kinds import KINDS
from schemas.rules import cross_field_rules
from tests.api.openapi_client import generate_client

#: small params for a user's first job of each kind
JOURNEY: dict[str, dict[str, Any]] = {
    "dice": {"dice": 3, "faces": 4},
    "planetx.enumerate": {"mode": "standard"},
    "planetx.deduce": KINDS["planetx.deduce"].example_params(),
    "planetx.simulate": {"mode": "standard", "games": 2},
    "mastermind.guess": KINDS["mastermind.guess"].example_params(),
    "mastermind.play": {"n": 4, "k": 6, "secrets": {"sample": 3, "seed": 1}},
    "leaving_earth.plan": KINDS["leaving_earth.plan"].example_params(),
    "taiji.solve": KINDS["taiji.solve"].example_params(),
    "taiji.enumerate": {"grid": [[{}, {}, {}], [{}, {}, {}]], "max_solutions": 10},
}
SHIPPED = sorted(name for name in KINDS if not name.startswith("test."))


@pytest.fixture(scope="module")
def spec(app) -> dict[str, Any]:
    return app.test_client().get("/openapi.json").get_json()


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method, path, operation)
        for path, item in spec["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def test_every_operation_has_a_unique_human_id_and_a_tag(spec) -> None:
    ids = [operation.get("operationId") for _, _, operation in _operations(spec)]
    assert None not in ids and len(ids) == len(set(ids))
    assert {"create_job", "get_job", "cancel_job", "list_jobs", "create_batch", "get_batch"} <= set(ids)
    assert all(operation.get("tags") for _, _, operation in _operations(spec))


def _schemas_named(part: Any) -> set[str]:
    return set(re.findall(r"#/components/schemas/([A-Za-z0-9_.-]+)", json.dumps(part)))


def test_every_schema_is_reachable_from_an_operation_and_every_reference_resolves(spec) -> None:
    """A generator makes a class of every schema: one no operation reaches is dead weight (BatchItem,
    replaced by its per-kind forms, and flask-smorest's PaginationMetadata were)."""
    components = spec["components"]
    reached = _schemas_named(spec["paths"]) | _schemas_named(components.get("responses", {}))
    frontier = set(reached)
    while frontier:
        named = (_schemas_named(components["schemas"].get(name, {})) for name in frontier)
        frontier = set().union(*named) - reached
        reached |= frontier
    assert sorted(set(components["schemas"]) - reached) == []
    assert sorted(reached - set(components["schemas"])) == []


def test_every_error_has_the_error_body_and_every_keyed_operation_says_401_and_429(spec) -> None:
    components = spec["components"]["responses"]
    for method, path, operation in _operations(spec):
        responses = operation["responses"]
        for code, response in responses.items():
            if "$ref" in response:
                response = components[response["$ref"].rpartition("/")[2]]
            if code.isdigit() and int(code) >= 400:
                schema = response["content"]["application/json"]["schema"]["$ref"]
                assert schema.endswith(("/Error", "/NotReady")), (method, path, code)
            if code in ("429", "503"):
                assert "Retry-After" in response["headers"], (method, path, code)
        if operation.get("security") != []:
            assert {"401", "429"} <= set(responses), (method, path)


def test_files_are_binary_and_streams_are_text(spec) -> None:
    def ok(path: str) -> dict[str, Any]:
        return spec["paths"][path]["get"]["responses"]["200"]["content"]

    binary = {"schema": {"type": "string", "format": "binary"}}
    # each file under its own media type first, then as plain bytes (api.media: a generated client that
    # knows no vendor type asks for those)
    files = {"picture.svg": "image/svg+xml", "boards.csv": "text/csv"}
    for name, media_type in {**files, "solutions.ndjson": "application/x-ndjson"}.items():
        assert ok(f"/jobs/{{job_id}}/{name}") == {media_type: binary, "application/octet-stream": binary}
        assert list(ok(f"/jobs/{{job_id}}/{name}"))[0] == media_type
    assert ok("/events") == {"text/event-stream": {"schema": {"type": "string"}}}


def test_the_headers_clients_depend_on_are_declared(spec) -> None:
    paths = spec["paths"]
    submit = paths["/jobs"]["post"]
    assert "Idempotency-Key" in [p["name"] for p in submit["parameters"]]
    assert {"Location", "Idempotent-Replayed"} <= set(submit["responses"]["202"]["headers"])
    assert "Link" in paths["/jobs"]["get"]["responses"]["200"]["headers"]
    poll = paths["/jobs/{job_id}"]["get"]
    assert {"ETag", "Retry-After"} <= set(poll["responses"]["200"]["headers"])
    parameters = spec["components"].get("parameters", {})
    named = [parameters[p["$ref"].rpartition("/")[2]] if "$ref" in p else p for p in poll["parameters"]]
    assert "If-None-Match" in [p["name"] for p in named]
    assert "Last-Event-ID" in [p.get("name") for p in paths["/events"]["get"]["parameters"]]
    assert "X-Total-Count" in paths["/jobs/{job_id}/boards.csv"]["get"]["responses"]["200"]["headers"]


def test_a_job_and_a_batch_are_typed_by_their_kind(spec, client) -> None:
    schemas = spec["components"]["schemas"]
    job = schemas["Job"]
    assert job["discriminator"]["propertyName"] == "kind"
    assert set(job["discriminator"]["mapping"]) == set(KINDS)
    dice = schemas["DiceJob"]["properties"]
    assert dice["kind"]["enum"] == ["dice"] and dice["params"] == {"$ref": "#/components/schemas/DiceParams"}
    assert dice["result"]["allOf"] == [{"$ref": "#/components/schemas/DiceResult"}]
    assert schemas["Batch"]["discriminator"]["mapping"]["dice"].endswith("/DiceBatch")
    listed = {kind["name"]: kind for kind in client.get("/kinds").get_json()}
    for name in SHIPPED:
        named = ("params_schema", "result_schema", "job_schema", "create_schema")
        assert {listed[name][key] for key in named} <= set(schemas)
        assert listed[name]["job_schema"] == kind_job_schema(name)
        assert listed[name]["create_schema"] == kind_create_schema(name)


def _one_of_by_kind(schemas: dict[str, Any], name: str) -> dict[str, dict[str, Any]]:
    """A oneOf with a discriminator on `kind`: each kind's schema, checked to be listed and mapped alike."""
    one_of = schemas[name]
    assert one_of["discriminator"]["propertyName"] == "kind"
    mapping = one_of["discriminator"]["mapping"]
    assert set(mapping) == set(KINDS)
    assert [item["$ref"] for item in one_of["oneOf"]] == list(mapping.values())
    return {kind: schemas[ref.rpartition("/")[2]] for kind, ref in mapping.items()}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def test_a_submit_is_typed_by_its_kind(spec, settings) -> None:
    """POST /jobs' body: one schema per kind, its kind a single name and its params the kind's schema
    (required when the kind requires a field of them), with every field a submit of any kind takes."""
    schemas = spec["components"]["schemas"]
    body = spec["paths"]["/jobs"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert body == _ref("JobCreate")
    creates = _one_of_by_kind(schemas, "JobCreate")
    common = {"kind", "params", "time_limit", "fresh", "priority", "queue_timeout", "callback_url"}
    for name, create in creates.items():
        assert create is schemas[kind_create_schema(name)]
        assert set(create["properties"]) == common and create["additionalProperties"] is False
        assert create["properties"]["kind"]["enum"] == [name]
        assert create["properties"]["params"] == _ref(KINDS[name].params_schema.__name__)
        assert create["properties"]["time_limit"]["maximum"] == settings.max_time_limit
    assert creates["dice"]["required"] == ["kind", "params"]
    assert creates["taiji.solve"]["required"] == ["kind"], "its params' fields all have defaults"
    assert creates["dice"]["properties"]["callback_url"]["format"] == "uri"


def test_a_batch_submit_is_typed_by_its_kind(spec) -> None:
    """POST /batches' body: one schema per kind, whose items' params are the kind's, or any object (params
    the kind refuses make a rejected item, never a 422); only the default kind may be left out."""
    schemas = spec["components"]["schemas"]
    creates = _one_of_by_kind(schemas, "BatchCreate")
    for name, create in creates.items():
        assert create["properties"]["kind"]["enum"] == [name]
        item = schemas[create["properties"]["items"]["items"]["$ref"].rpartition("/")[2]]
        params = KINDS[name].params_schema.__name__
        assert item["properties"]["params"]["anyOf"] == [_ref(params), {"type": "object"}]
        assert item["required"] == ["client_id"]
    assert creates["dice"]["required"] == ["items", "kind"]
    default = creates["leaving_earth.plan"]
    assert (
        default["required"] == ["items"] and default["properties"]["kind"]["default"] == "leaving_earth.plan"
    )


def test_each_params_schema_states_its_rules_across_fields(spec) -> None:
    schemas = spec["components"]["schemas"]
    for name in SHIPPED:
        description = schemas[KINDS[name].params_schema.__name__]["description"]
        assert "Rules across fields" in description, name
        for rule in cross_field_rules(KINDS[name].params_schema):
            assert f"- `{rule.field}`: {rule.says}" in description, (name, rule)
    assert "`type` says which fields apply" in schemas["Observation"]["description"]


# -- from the outside: a generated client -------------------------------------------------------------
@pytest.fixture(scope="module")
def generated(live_api, tmp_path_factory) -> Any:
    """The client openapi-python-client generates from the served document (no warning allowed)."""
    package = generate_client(f"{live_api.url}/openapi.json", tmp_path_factory.mktemp("generated"))
    sys.path.insert(0, str(package.parent))
    try:
        yield importlib.import_module(package.name)
    finally:
        sys.path.remove(str(package.parent))


def test_a_generated_client_has_a_name_of_its_own_and_a_create_model_per_kind(generated) -> None:
    """Its package is named from the document's title, never as our own client library (zolve_client),
    and a submit of each kind is a model of its own whose params are the kind's."""
    assert generated.__name__ == "zolve_api_client"
    models = importlib.import_module(f"{generated.__name__}.models")
    for name in SHIPPED:
        params = getattr(models, kind_create_schema(name)).__annotations__["params"]
        assert KINDS[name].params_schema.__name__ in params, (name, params)
    dice = models.DiceJobCreate.from_dict({"kind": "dice", "params": {"dice": 3, "faces": 4}})
    assert isinstance(dice.params, models.DiceParams) and dice.params.faces == 4
    assert dice.to_dict() == {"kind": "dice", "params": {"dice": 3, "faces": 4}}


def _call(generated: Any, group: str, operation: str) -> Any:
    return importlib.import_module(f"{generated.__name__}.api.{group}.{operation}")


def _wait(generated: Any, client: Any, job_id: Any, timeout: float = 120) -> Any:
    get_job = _call(generated, "jobs", "get_job")
    deadline = time.monotonic() + timeout
    while True:
        job = get_job.sync(job_id=job_id, client=client, wait=5)
        if job.state.value in ("succeeded", "failed", "cancelled"):
            return job
        assert time.monotonic() < deadline, f"job {job_id} still {job.state}"


def test_a_users_journey_with_the_generated_client_alone(
    generated, live_api, make_key, worker, closing
) -> None:
    models = importlib.import_module(f"{generated.__name__}.models")
    token = make_key()["Authorization"].removeprefix("Bearer ")
    client = closing.enter_context(
        generated.AuthenticatedClient(base_url=live_api.url, token=token, raise_on_unexpected_status=True)
    )
    create_job = _call(generated, "jobs", "create_job")

    finished = {}
    for name in SHIPPED:
        body = getattr(models, kind_create_schema(name)).from_dict({"kind": name, "params": JOURNEY[name]})
        created = create_job.sync_detailed(client=client, body=body)
        assert created.status_code == 202 and created.headers["Location"].endswith(str(created.parsed.id))
        assert type(created.parsed).__name__ == kind_job_schema(name), "typed by its kind"
        finished[name] = _wait(generated, client, created.parsed.id)
    for name, job in finished.items():
        assert job.state.value == "succeeded", (name, job.error)
        result_class = KINDS[name].result_schema.__name__
        assert type(job.result).__name__ == result_class, (name, type(job.result))
        assert type(job.params).__name__ == KINDS[name].params_schema.__name__

    # the job list, a page at a time
    list_jobs = _call(generated, "jobs", "list_jobs")
    first = list_jobs.sync(client=client, limit=4)
    second = list_jobs.sync(client=client, limit=4, cursor=first.next_cursor)
    seen = {job.id for job in first.items} | {job.id for job in second.items}
    assert len(seen) == 8 and seen <= {job.id for job in finished.values()}

    # a rejected submit: its field errors arrive typed
    bad = create_job.sync_detailed(
        client=closing.enter_context(generated.AuthenticatedClient(base_url=live_api.url, token=token)),
        body=models.DiceJobCreate.from_dict({"kind": "dice", "params": {"dice": "three", "faces": 4}}),
    )
    assert bad.status_code == 422 and type(bad.parsed).__name__ == "Error" and bad.parsed.code == 422
    assert "dice" in bad.parsed.errors.to_dict()["params"]

    # cancel a long job
    long = create_job.sync(
        client=client,
        body=models.DiceJobCreate.from_dict(
            {"kind": "dice", "params": {"dice": 10, "faces": 20}, "time_limit": 60.0}
        ),
    )
    cancelled = _call(generated, "jobs", "cancel_job").sync(job_id=long.id, client=client)
    assert cancelled.state.value in ("cancelling", "cancelled")
    assert _wait(generated, client, long.id).state.value == "cancelled"

    # a batch, typed by its kind
    batch = _call(generated, "batches", "create_batch").sync(
        client=client,
        body=models.DiceBatchCreate.from_dict(
            {"kind": "dice", "items": [{"client_id": "a", "params": {"dice": 3, "faces": 4}}]}
        ),
    )
    assert type(batch).__name__ == "DiceBatch" and batch.items[0].client_id == "a"

    # a picture, as bytes; a kind's rows, typed
    picture = _call(generated, "jobs", "get_job_picture").sync(job_id=finished["dice"].id, client=client)
    assert picture.payload.read().lstrip().startswith(b"<svg")
    list_solutions = _call(generated, "solutions", "list_solutions")
    solutions = list_solutions.sync(job_id=finished["taiji.enumerate"].id, client=client)
    assert type(solutions).__name__ == "TaijiSolutionPage" and len(solutions.items) == 10


def test_what_makes_a_job_or_batch_links_to_every_operation_on_any_of_them(spec) -> None:
    """Every operation on a job or batch but a kind's rows, which a job of another kind has none of."""
    ids = {operation["operationId"] for _, _, operation in _operations(spec)}
    rows = {f"/jobs/{{job_id}}/{kind.rows.name}" for kind in KINDS.values() if kind.rows}
    for path, placeholder in (("/jobs", "{job_id}"), ("/batches", "{batch_id}")):
        links = spec["paths"][path]["post"]["responses"]["202"]["links"]
        on_it = {
            op["operationId"]
            for method, p, op in _operations(spec)
            if placeholder in p and p.rsplit(".", 1)[0] not in rows
        }
        assert set(links) == on_it and set(links) <= ids
        assert not {"list_boards", "export_boards_csv", "list_solutions"} & set(links)
        sources = {link["parameters"][placeholder.strip("{}")] for link in links.values()}
        assert sources == {"$response.body#/id"}
