"""Params and result of the `leaving_earth.plan` kind (Leaving Earth mission plans)."""

from __future__ import annotations

from typing import Any, ClassVar

from marshmallow import Schema, ValidationError, fields, pre_load, validate, validates_schema

from puzzles.leaving_earth.data import FIRST_YEAR, LAST_YEAR, LOCATIONS
from puzzles.leaving_earth.request import (
    COMPONENT_TYPES,
    MAX_NUMBER,
    OBJECTIVES,
    RANGE_HELP,
    RequestError,
    build_request,
    parse_range,
)
from puzzles.leaving_earth.routes import LAUNCHES
from schemas.fields import Integer
from schemas.rules import WHOLE, CrossFieldRule

MAX_PAYLOAD = 500
MAX_WAYPOINTS = 4
_CODES = ", ".join(f"{code} ({location.name})" for code, location in LOCATIONS.items())


class RangeField(fields.Field[list[int]]):
    """`les`' RANGE: "4", "-4", "4+", "2-4" (or an integer, or [min, max])."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> list[int]:
        if isinstance(value, str) and len(value) > 20:
            raise ValidationError("too long")
        try:
            return list(parse_range(value))
        except (RequestError, TypeError, ValueError, OverflowError) as exc:
            raise ValidationError(f"expected {RANGE_HELP}") from exc

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


#: the text form of a range as the document writes it (RANGE_HELP); its bounds are a rule (PlanParams)
RANGE_PATTERN = r"^\s*([0-9]{1,20}|-[0-9]{1,20}|[0-9]{1,20}\+|[0-9]{1,20}-[0-9]{1,20})\s*$"
_RANGE_RULE = f"a range's numbers are at most {MAX_NUMBER:,}, and its min at most its max"


def _range(description: str) -> RangeField:
    return RangeField(
        load_default=None,
        allow_none=True,
        metadata={
            "description": f"{description}: {RANGE_HELP}",
            "oneOf": [
                {"type": "string", "pattern": RANGE_PATTERN},
                {"type": "integer", "minimum": 0, "maximum": MAX_NUMBER},
            ],
        },
    )


class Waypoint(Schema):
    location = fields.String(required=True, validate=validate.OneOf(list(LOCATIONS)))
    drop = Integer(
        load_default=0, validate=validate.Range(0, MAX_PAYLOAD), metadata={"description": "mass left here"}
    )
    pick_up = Integer(
        load_default=0,
        validate=validate.Range(0, MAX_PAYLOAD),
        metadata={"description": "mass taken on here"},
    )


class PlanParams(Schema):
    cross_field_rules: ClassVar[tuple[CrossFieldRule, ...]] = (
        CrossFieldRule(
            WHOLE,
            "the mission must make sense: `origin` and `destination` differ; `minimize` names distinct "
            "objectives; no waypoint drops more than the spacecraft carries",
        ),
        *(CrossFieldRule(name, _RANGE_RULE) for name in ("components", "cost", "time")),
    )

    origin = fields.String(
        required=True, validate=validate.OneOf(list(LOCATIONS)), metadata={"description": f"one of {_CODES}"}
    )
    destination = fields.String(required=True, validate=validate.OneOf(list(LOCATIONS)))
    payload = Integer(load_default=1, validate=validate.Range(1, MAX_PAYLOAD))
    components = fields.Dict(
        keys=fields.String(validate=validate.OneOf(COMPONENT_TYPES)),
        values=RangeField(),
        load_default=dict,
        metadata={"description": f"how many of each of {', '.join(COMPONENT_TYPES)} (default 0-8 each)"},
    )
    cost = _range("total cost")
    time = _range("total years")
    year = Integer(
        load_default=None,
        allow_none=True,
        validate=validate.Range(FIRST_YEAR, LAST_YEAR),
        metadata={"description": "the year the journey starts (needed for slingshot maneuvers)"},
    )
    free_ions = Integer(load_default=0, validate=validate.Range(0, 100))
    minimize = fields.List(
        fields.String(validate=validate.OneOf(OBJECTIVES)),
        load_default=lambda: ["cost"],
        validate=validate.Length(1, 3),
        metadata={
            "description": "objectives in priority order; one name means les' order for it (a string of "
            "names joined by commas is read as this list)"
        },
    )
    rendezvous = fields.Boolean(
        load_default=True, metadata={"description": "ion thrusters may be detached once no longer needed"}
    )
    aerobraking = fields.Boolean(
        load_default=False, metadata={"description": "each maneuver with an aerobraking profile may use it"}
    )
    faster = fields.Boolean(
        load_default=False,
        metadata={"description": "multi-year maneuvers may be flown in half the years at double difficulty"},
    )
    launch = fields.String(
        load_default="any",
        validate=validate.OneOf(LAUNCHES),
        metadata={
            "description": "Earth to orbit: any, two-stage (via suborbital flight; les' default) or single"
        },
    )
    waypoints = fields.List(
        fields.Nested(Waypoint),
        load_default=list,
        validate=validate.Length(max=MAX_WAYPOINTS),
        metadata={"description": "stops in order between origin and destination (return trips: E, L, E)"},
    )
    engine = fields.String(
        load_default="bounded",
        validate=validate.OneOf(["bounded", "optimize"]),
        metadata={"description": "bounded: relaxation-pruned search; optimize: Z3 Optimize on every route"},
    )

    @pre_load
    def _minimize_as_list(self, data: Any, **kwargs: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("minimize"), str):
            return {**data, "minimize": [name for name in data["minimize"].split(",") if name]}
        return data

    @validates_schema
    def _meaningful(self, data: dict[str, Any], **kwargs: Any) -> None:
        try:
            build_request(data)
        except RequestError as exc:
            raise ValidationError(str(exc)) from exc


class Stage(Schema):
    origin = fields.String()
    destination = fields.String()
    difficulty = fields.Integer()
    components = fields.Dict(keys=fields.String(), values=fields.Integer())
    aerobraking = fields.Boolean()
    thrust = fields.Integer()
    slingshot = fields.Boolean()
    time = fields.Integer()
    year = fields.Integer()
    faster = fields.Integer(
        metadata={"description": "times the years were halved (each doubling difficulty)"}
    )
    rendezvous = fields.Raw(metadata={"description": 'e.g. [{"detach": ["ion", 1]}] before this maneuver'})


class PlanResult(Schema):
    status = fields.String(metadata={"description": "optimal, infeasible or invalid"})
    message = fields.String()
    start = fields.Integer()
    end = fields.Integer()
    components = fields.Dict(keys=fields.String(), values=fields.Integer())
    payload = fields.Integer()
    mass = fields.Integer(metadata={"description": "rockets and ion thrusters (payload not included)"})
    cost = fields.Integer()
    time = fields.Integer()
    plan = fields.List(fields.Nested(Stage))
    route = fields.List(fields.String())
    objectives = fields.List(fields.String())
    search = fields.Dict(keys=fields.String(), values=fields.Raw())
