"""Numbers in requests: a JSON body's numbers are JSON numbers (a string such as "3" is a field error, and
an integer is an int); a query string's are ASCII digits; every number is finite and whole where it must be.

marshmallow's own Integer and Float call int() / float() on strings, which also read other scripts' digits
('٣' is 3, '１' is 1), underscores ('1_0' is 10) and padding; its Integer truncates 1.5 to 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from marshmallow import Schema, ValidationError, fields

from kinds import KINDS
from schemas import fields as ascii_fields
from schemas.batches import BatchCreate, BatchGetArgs
from schemas.dice import DiceParams
from schemas.events import EventStreamArgs, StreamResumeArgs
from schemas.jobs import JobCreate, JobGetArgs, JobListArgs, ResultItemsArgs
from schemas.leaving_earth import PlanParams
from schemas.planetx import BoardExportQuery, BoardQuery, DeduceParams, EnumerateParams, SimulateParams

BODY_SCHEMAS = [JobCreate, BatchCreate]
QUERY_SCHEMAS = [
    JobGetArgs,
    JobListArgs,
    ResultItemsArgs,
    BatchGetArgs,
    BoardQuery,
    BoardExportQuery,
    EventStreamArgs,
    StreamResumeArgs,
]
NOT_NUMBERS = ["٣", "١٢", "１", "²", "1٣", "1_0", " 1", "0x1", "1e3", "", "Infinity", "NaN", "\x00", "1\x00"]


def _number_fields(schema: Schema, path: str = "") -> Iterator[tuple[str, fields.Field]]:
    for name, field in schema.fields.items():
        yield from _inner(field, f"{path}{name}")


def _inner(field: fields.Field, path: str) -> Iterator[tuple[str, fields.Field]]:
    if isinstance(field, fields.Number):
        yield path, field
    elif isinstance(field, fields.Nested):
        yield from _number_fields(field.schema, f"{path}.")
    elif isinstance(field, fields.List):
        yield from _inner(field.inner, f"{path}[]")
    elif isinstance(field, fields.Dict) and field.value_field is not None:
        yield from _inner(field.value_field, f"{path}{{}}")


def _body_schemas() -> list[type[Schema]]:
    kinds = [kind.params_schema for name, kind in sorted(KINDS.items()) if not name.startswith("test.")]
    return kinds + BODY_SCHEMAS


def _strict(field: fields.Field) -> bool:
    return isinstance(field, ascii_fields.Float) or (isinstance(field, fields.Integer) and field.strict)


@pytest.mark.parametrize("schema", _body_schemas(), ids=lambda schema: schema.__name__)
def test_every_number_a_body_holds_is_a_json_number(schema: type[Schema]) -> None:
    numbers = list(_number_fields(schema()))
    loose = [path for path, field in numbers if not _strict(field)]
    assert not loose, f"use schemas.fields.Integer / Float (or strict=True) for {loose}"
    for _path, field in numbers:
        for text in ("1", "2.5", "٣"):
            with pytest.raises(ValidationError):
                field.deserialize(text)


@pytest.mark.parametrize("schema", QUERY_SCHEMAS, ids=lambda schema: schema.__name__)
def test_every_number_a_query_holds_is_read_from_ascii_digits_only(schema: type[Schema]) -> None:
    loose = [
        path
        for path, field in _number_fields(schema())
        if not isinstance(field, ascii_fields.QueryInteger | ascii_fields.QueryFloat) and not _strict(field)
    ]
    assert not loose, f"use schemas.fields.QueryInteger / QueryFloat for {loose}"


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_only_ascii_digits_make_a_query_integer_or_float(text: str) -> None:
    with pytest.raises(ValidationError):
        ascii_fields.QueryInteger().deserialize(text)
    if text != "1e3":
        with pytest.raises(ValidationError):
            ascii_fields.QueryFloat().deserialize(text)


@pytest.mark.parametrize(
    ("value", "expected"), [("12", 12), ("-3", -3), ("+4", 4), ("007", 7), (5, 5), (6.0, 6), (-0.0, 0)]
)
def test_query_integers(value: object, expected: int) -> None:
    assert ascii_fields.QueryInteger().deserialize(value) == expected


@pytest.mark.parametrize("value", [1.5, -0.25, math.inf, -math.inf, math.nan, 1e308 + 0.5j, True, [1], None])
def test_an_integer_is_whole_and_finite(value: object) -> None:
    with pytest.raises(ValidationError):
        ascii_fields.QueryInteger().deserialize(value)
    with pytest.raises(ValidationError):
        ascii_fields.Integer().deserialize(value)


@pytest.mark.parametrize("value", ["3", "-3", "+4", 3.0, -0.0, "3.0"])
def test_a_body_integer_is_an_int_only(value: object) -> None:
    with pytest.raises(ValidationError) as caught:
        ascii_fields.Integer().deserialize(value)
    assert caught.value.messages == ["Not a valid integer."]


@pytest.mark.parametrize(("value", "expected"), [(12, 12), (-3, -3), (10**20, 10**20)])
def test_body_integers(value: int, expected: int) -> None:
    assert ascii_fields.Integer().deserialize(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1.5", 1.5), ("-2", -2.0), (".5", 0.5), ("3.", 3.0), ("1e3", 1000.0), ("2.5E-1", 0.25), (7, 7.0)],
)
def test_query_floats(value: object, expected: float) -> None:
    assert ascii_fields.QueryFloat().deserialize(value) == expected


@pytest.mark.parametrize(("value", "expected"), [(1.5, 1.5), (7, 7.0), (-0.0, 0.0), (1e308, 1e308)])
def test_body_floats(value: object, expected: float) -> None:
    assert ascii_fields.Float().deserialize(value) == expected


@pytest.mark.parametrize("value", [math.inf, math.nan, "inf", "-Infinity", "1e999", 10**400, "٣.5", "1_0.5"])
def test_a_float_is_finite_and_ascii(value: object) -> None:
    with pytest.raises(ValidationError):
        ascii_fields.QueryFloat().deserialize(value)
    with pytest.raises(ValidationError):
        ascii_fields.Float().deserialize(value)


@pytest.mark.parametrize("value", ["10", "1.5", True])
def test_a_body_float_is_a_json_number(value: object) -> None:
    with pytest.raises(ValidationError) as caught:
        ascii_fields.Float().deserialize(value)
    assert caught.value.messages == ["Not a valid number."]


@pytest.mark.parametrize(
    ("schema", "data", "field"),
    [
        (DiceParams, {"dice": "٣", "faces": 6}, "dice"),
        (DiceParams, {"dice": 3, "faces": "１"}, "faces"),
        (DiceParams, {"dice": 3.5, "faces": 6}, "dice"),
        (DiceParams, {"dice": 3, "faces": 6, "max_face": 10**400}, "max_face"),
        (DiceParams, {"dice": 3, "faces": 6, "max_face": float("inf")}, "max_face"),
        (EnumerateParams, {"mode": "standard", "shard_depth": "١"}, "shard_depth"),
        (
            EnumerateParams,
            {"mode": "expert", "constraints": [{"sector": "١", "object": "comet"}]},
            "constraints",
        ),
        (DeduceParams, {"mode": "standard", "top": "٣"}, "top"),
        (SimulateParams, {"mode": "standard", "games": "٣"}, "games"),
        (SimulateParams, {"mode": "standard", "seed": 10**400}, "seed"),
        (PlanParams, {"origin": "E", "destination": "L", "payload": "٣"}, "payload"),
        (
            PlanParams,
            {"origin": "E", "destination": "L", "waypoints": [{"location": "M", "drop": "١"}]},
            "waypoints",
        ),
        (JobCreate, {"kind": "dice", "time_limit": "٣"}, "time_limit"),
        (JobCreate, {"kind": "dice", "time_limit": float("nan")}, "time_limit"),
        (JobListArgs, {"limit": "٣"}, "limit"),
        (JobListArgs, {"limit": "1_0"}, "limit"),
        (JobGetArgs, {"wait": "٣"}, "wait"),
        (BatchGetArgs, {"limit": "١"}, "limit"),
        (BoardQuery, {"cursor": "٣"}, "cursor"),
        (BoardQuery, {"cursor": str(2**63)}, "cursor"),  # was a 422 from PostgreSQL naming no field
        (BoardQuery, {"x": ["١"]}, "x"),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else None,
)
def test_a_non_ascii_or_non_finite_number_is_a_field_error(
    schema: type[Schema], data: dict, field: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        schema().load(data)
    assert field in caught.value.messages, caught.value.messages


@pytest.mark.parametrize(
    ("schema", "data", "path"),
    [
        (DiceParams, {"dice": "3", "faces": 6}, ("dice",)),
        (DiceParams, {"dice": 3, "faces": 6.0}, ("faces",)),
        (JobCreate, {"kind": "dice", "time_limit": "10"}, ("time_limit",)),
        (BatchCreate, {"items": [{"client_id": "a"}], "time_limit": "10"}, ("time_limit",)),
        (SimulateParams, {"mode": "standard", "games": "5"}, ("games",)),
        (
            DeduceParams,
            {"mode": "standard", "observations": [{"type": "target", "sector": "4", "seen": "empty"}]},
            ("observations", 0, "sector"),
        ),
        (PlanParams, {"origin": "E", "destination": "L", "year": "1960"}, ("year",)),
        (PlanParams, {"origin": "E", "destination": "L", "cost": [2, "30"]}, ("cost",)),
        (PlanParams, {"origin": "E", "destination": "L", "cost": {"max": "30"}}, ("cost",)),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else None,
)
def test_a_number_sent_as_a_string_is_the_fields_error(schema: type[Schema], data: dict, path: tuple) -> None:
    with pytest.raises(ValidationError) as caught:
        schema().load(data)
    messages = caught.value.messages
    for key in path:
        messages = messages[key]
    assert messages, caught.value.messages


def test_query_strings_still_load_ascii_digits() -> None:
    assert JobListArgs().load({"limit": "50"})["limit"] == 50
    assert JobGetArgs().load({"wait": "2.5"})["wait"] == 2.5
    assert BoardQuery().load({"x": ["7"], "cursor": "12"}) == {"x": [7], "cursor": 12, "limit": 100}
    assert EventStreamArgs().load({"last_event_id": "0"})["last_event_id"] == 0
