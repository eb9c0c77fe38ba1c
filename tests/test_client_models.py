"""The client's typed models (client/zolve_client/models.py, kinds.py) against the OpenAPI document the API
serves, built the way `zolve openapi` builds it (no server reached): each TypedDict has its component's
fields, the same ones required, and values of the same JSON types; KINDS maps every kind of the document to
the params and result its job component refers to. A field added to, dropped from or retyped in the API
fails here until the client follows."""

from __future__ import annotations

import re
import types
import typing
from functools import cache
from typing import Any

import pytest
from zolve_client import models
from zolve_client.kinds import KINDS, Kind
from zolve_client.states import JobState


@cache
def document() -> dict[str, Any]:
    from api.app import openapi_document
    from core.config import Settings

    return openapi_document(Settings())


def component(name: str) -> dict[str, Any]:
    return document()["components"]["schemas"][name]


def resolved(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        return component(schema["$ref"].rpartition("/")[2])
    return schema


def schema_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a schema admits ("null" where nullable); empty: any."""
    schema = resolved(schema)
    found = {"null"} if schema.get("nullable") else set()
    for key in ("oneOf", "anyOf", "allOf"):
        for part in schema.get(key, []):
            found |= schema_types(part) or {"any"}
    if "type" in schema:
        found.add(schema["type"])
    elif "properties" in schema or "discriminator" in schema:
        found.add("object")
    return set() if "any" in found else found


#: the JSON type of each Python type a model uses
JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array", dict: "object"}


def annotation_types(annotation: Any) -> set[str]:
    """The JSON types a model field's annotation admits; empty: any (Any, or a kind's type variable)."""
    origin = typing.get_origin(annotation)
    if annotation is Any or isinstance(annotation, typing.TypeVar):
        return set()
    if annotation is type(None):
        return {"null"}
    if origin in (typing.Union, types.UnionType):
        parts = [annotation_types(part) for part in typing.get_args(annotation)]
        return set() if set() in parts else set().union(*parts)
    if origin is typing.Literal:
        return {JSON_TYPE[type(value)] for value in typing.get_args(annotation)}
    if typing.is_typeddict(origin or annotation):
        return {"object"}
    return {JSON_TYPE[origin or annotation]}


def fields(model: Any) -> dict[str, Any]:
    return typing.get_type_hints(model)


def widened(json_types: set[str]) -> set[str]:
    """A number's types: an integer is one too."""
    return json_types | {"integer"} if "number" in json_types else json_types


def check_model(model: Any, name: str) -> None:
    """The model has the component's fields, requires the ones it requires, and types them alike."""
    schema = component(name)
    properties = schema["properties"]
    assert set(fields(model)) == set(properties), name
    assert set(model.__required_keys__) == set(schema.get("required", [])), name
    for field, annotation in fields(model).items():
        wanted, given = widened(schema_types(properties[field])), widened(annotation_types(annotation))
        assert not wanted or not given or given == wanted, (name, field, given, wanted)


def job_components() -> dict[str, str]:
    """Each kind's job component, from the Job discriminator: {"dice": "DiceJob", ...}; not the test-only
    kinds (tests/plugins.py), which another test module of this process may have registered."""
    mapping = component("Job")["discriminator"]["mapping"]
    return {kind: ref.rpartition("/")[2] for kind, ref in mapping.items() if not kind.startswith("test.")}


def test_kinds_maps_every_kind_of_the_document_and_no_other() -> None:
    assert set(KINDS) == set(job_components())
    assert all(name == kind.name for name, kind in KINDS.items())


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_kinds_params_and_result_are_its_jobs(name: str) -> None:
    kind: Kind[Any, Any] = KINDS[name]
    job = component(job_components()[name])["properties"]
    assert job["params"]["$ref"].endswith(f"/{kind.params.__name__}")
    assert job["result"]["allOf"][0]["$ref"].endswith(f"/{kind.result.__name__}")
    check_model(kind.params, kind.params.__name__)
    check_model(kind.result, kind.result.__name__)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_job_a_batch_and_its_items_have_every_kinds_fields(name: str) -> None:
    job = job_components()[name]
    check_model(models.Job, job)
    check_model(models.Batch, job.removesuffix("Job") + "Batch")
    check_model(models.BatchItem, job.removesuffix("Job") + "BatchItem")


@pytest.mark.parametrize(
    ("model", "name"),
    [
        (models.JobError, "JobError"),
        (models.JobLinks, "JobLinks"),
        (models.JobPage, "JobPage"),
        (models.Delivery, "Delivery"),
        (models.DeliveryAttempt, "DeliveryAttempt"),
    ],
)
def test_the_shared_resources_are_their_components(model: Any, name: str) -> None:
    check_model(model, name)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_batch_item_to_create_is_every_kinds(name: str) -> None:
    check_model(models.BatchItemCreate, job_components()[name].removesuffix("Job") + "BatchItemCreate")


def test_a_jobs_states_are_the_documents_and_job_state_s() -> None:
    states = set(typing.get_args(models.State))
    assert states == set(component("DiceJob")["properties"]["state"]["enum"]) == set(JobState)
    assert set(typing.get_args(models.ItemState)) == states | {"rejected"}


def test_an_events_data_has_the_fields_the_stream_documents() -> None:
    """The stream's data has no component of its own: its response's description lists the fields."""
    stream = document()["paths"]["/jobs/{job_id}/events"]["get"]["responses"]["200"]["description"]
    listed = re.search(r"`data:` JSON \{([^}]*)\}", stream)
    assert listed, stream
    assert set(fields(models.EventData)) == {name.strip() for name in listed[1].split(",")}
