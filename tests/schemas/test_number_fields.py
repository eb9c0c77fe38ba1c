"""Numbers in requests: only ASCII digits are numbers, and every number is finite and whole where it must be.

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
from schemas.jobs import JobCreate, JobGetArgs, JobListArgs
from schemas.leaving_earth import PlanParams
from schemas.planetx import BoardExportQuery, BoardQuery, DeduceParams, EnumerateParams, SimulateParams

REQUEST_SCHEMAS = [
    JobCreate,
    JobGetArgs,
    JobListArgs,
    BatchCreate,
    BatchGetArgs,
    BoardQuery,
    BoardExportQuery,
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


def _request_schemas() -> list[type[Schema]]:
    kinds = [kind.params_schema for name, kind in sorted(KINDS.items()) if not name.startswith("test.")]
    return kinds + REQUEST_SCHEMAS


@pytest.mark.parametrize("schema", _request_schemas(), ids=lambda schema: schema.__name__)
def test_every_number_a_request_holds_is_read_from_ascii_digits_only(schema: type[Schema]) -> None:
    loose = [
        path
        for path, field in _number_fields(schema())
        if not isinstance(field, ascii_fields.Integer | ascii_fields.Float)
        and not (isinstance(field, fields.Integer) and field.strict)
    ]
    assert not loose, f"use schemas.fields.Integer / Float (or strict=True) for {loose}"


@pytest.mark.parametrize("text", NOT_NUMBERS)
def test_only_ascii_digits_make_an_integer_or_a_float(text: str) -> None:
    with pytest.raises(ValidationError):
        ascii_fields.Integer().deserialize(text)
    if text != "1e3":
        with pytest.raises(ValidationError):
            ascii_fields.Float().deserialize(text)


@pytest.mark.parametrize(
    ("value", "expected"), [("12", 12), ("-3", -3), ("+4", 4), ("007", 7), (5, 5), (6.0, 6), (-0.0, 0)]
)
def test_integers_as_before(value: object, expected: int) -> None:
    assert ascii_fields.Integer().deserialize(value) == expected


@pytest.mark.parametrize("value", [1.5, -0.25, math.inf, -math.inf, math.nan, 1e308 + 0.5j, True, [1], None])
def test_an_integer_is_whole_and_finite(value: object) -> None:
    with pytest.raises(ValidationError):
        ascii_fields.Integer().deserialize(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("1.5", 1.5), ("-2", -2.0), (".5", 0.5), ("3.", 3.0), ("1e3", 1000.0), ("2.5E-1", 0.25), (7, 7.0)],
)
def test_floats_as_before(value: object, expected: float) -> None:
    assert ascii_fields.Float().deserialize(value) == expected


@pytest.mark.parametrize("value", [math.inf, math.nan, "inf", "-Infinity", "1e999", 10**400, "٣.5", "1_0.5"])
def test_a_float_is_finite_and_ascii(value: object) -> None:
    with pytest.raises(ValidationError):
        ascii_fields.Float().deserialize(value)


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


def test_ascii_digit_strings_still_load() -> None:
    assert DiceParams().load({"dice": "3", "faces": "6"})["faces"] == 6
    assert JobListArgs().load({"limit": "50"})["limit"] == 50
    assert BoardQuery().load({"x": ["7"], "cursor": "12"}) == {"x": [7], "cursor": 12, "limit": 100}
