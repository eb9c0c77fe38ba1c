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


# [0, Infinity] was a 500 (OverflowError from int()); '٣' (Arabic-Indic 3) and '１' (fullwidth 1) were read as
# numbers by \d and int(); 10**400 was taken and clamped; 1.5 was truncated to 1
@pytest.mark.parametrize(
    "value",
    [
        [0, float("inf")],
        [float("-inf"), 3],
        [0, float("nan")],
        {"min": float("inf")},
        {"max": float("nan")},
        [0, 10**400],
        10**400,
        {"min": 0, "max": -(10**400)},
        [0, 1e308],
        [1.5, 2],
        "٣",
        "١-٣",
        "٣+",
        "-٣",
        "１",
        "²",
        [0, "٣"],
        {"min": "١"},
        "1_0",
        [True, 3],
        [None, 3],
    ],
    ids=lambda value: repr(value)[:24],
)
@pytest.mark.parametrize("field", ["cost", "time", "components"])
def test_a_range_holds_ascii_digits_and_sane_numbers_only(field: str, value: object) -> None:
    params = {"origin": "E", "destination": "L", field: {"juno": value} if field == "components" else value}
    with pytest.raises(ValidationError) as caught:
        PlanParams().load(params)
    assert list(caught.value.messages) == [field], caught.value.messages


def test_a_range_may_still_be_a_pair_of_whole_numbers() -> None:
    loaded = PlanParams().load({"origin": "E", "destination": "L", "cost": [2, 30], "time": {"max": 4}})
    assert loaded["cost"] == [2, 30] and loaded["time"] == [0, 4]


@pytest.mark.parametrize("value", [[2.0, 30], [2, "30"], {"max": "4"}, {"min": 1.0}])
def test_the_numbers_of_a_range_pair_are_json_integers(value: object) -> None:
    """Only the text form ("2-30") is text; a pair's or a {min, max}'s numbers are ints, as everywhere."""
    with pytest.raises(ValidationError) as caught:
        PlanParams().load({"origin": "E", "destination": "L", "cost": value})
    assert list(caught.value.messages) == ["cost"]
