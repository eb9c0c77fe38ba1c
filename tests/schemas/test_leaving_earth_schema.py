"""leaving_earth.plan params: every bad request is a field-level error, never a crash."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from schemas.leaving_earth import PlanParams


def test_defaults_and_les_ranges() -> None:
    params = PlanParams().load(
        {"origin": "E", "destination": "L", "components": {"juno": "2-12"}, "time": "-3"}
    )
    assert params["payload"] == 1 and params["minimize"] == ["cost"] and params["launch"] == "any"
    assert params["components"] == {"juno": [2, 12]} and params["time"] == [0, 3]


def test_minimize_accepts_a_priority_list_as_text() -> None:
    assert PlanParams().load({"origin": "E", "destination": "L", "minimize": "time,mass"})["minimize"] == [
        "time",
        "mass",
    ]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"origin": "E", "destination": "X"}, "destination"),
        ({"origin": "E"}, "destination"),
        ({"origin": "E", "destination": "L", "payload": 0}, "payload"),
        ({"origin": "E", "destination": "L", "components": {"warp": 1}}, "components"),
        ({"origin": "E", "destination": "L", "components": {"juno": "lots"}}, "components"),
        ({"origin": "E", "destination": "L", "cost": "1-2-3"}, "cost"),
        ({"origin": "E", "destination": "L", "year": 1900}, "year"),
        ({"origin": "E", "destination": "L", "minimize": ["speed"]}, "minimize"),
        ({"origin": "E", "destination": "L", "launch": "catapult"}, "launch"),
        ({"origin": "E", "destination": "L", "waypoints": [{"location": "L"}] * 5}, "waypoints"),
        ({"origin": "E", "destination": "E"}, "_schema"),
        ({"origin": "E", "destination": "E", "waypoints": [{"location": "L", "drop": 2}]}, "_schema"),
    ],
)
def test_bad_params_are_field_errors(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        PlanParams().load(params)
    assert field in caught.value.messages, caught.value.messages
