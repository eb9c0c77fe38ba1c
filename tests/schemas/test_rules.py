"""Rules across a kind's params (schemas.rules): each shipped params schema names where its rules report,
and a refusal for one lands there, so a 422 for schema-valid params can be told from any other."""

from __future__ import annotations

import pytest
from marshmallow import Schema, ValidationError, fields

from kinds import KINDS
from schemas.rules import WHOLE, CrossFieldRule, describe_rules, rule_fields, unknown_rule_fields

SHIPPED = sorted(name for name in KINDS if not name.startswith("test."))

#: params that break one rule of each kind (and are valid field by field)
BROKEN: dict[str, dict] = {
    "dice": {"dice": 3, "faces": 4, "beats": [[0, 3]]},
    "leaving_earth.plan": {"origin": "E", "destination": "E"},
    "mastermind.guess": {"n": 4, "k": 6, "history": [{"guess": [0, 1], "black": 0, "white": 0}]},
    "mastermind.play": {"n": 6, "k": 6, "secrets": "all"},
    "planetx.deduce": {"mode": "standard", "sky_start": 13},
    "planetx.enumerate": {"mode": "standard", "constraints": [{"sector": 13, "object": "comet"}]},
    "planetx.simulate": {"mode": "standard", "conference_spaces": [13]},
    "taiji.enumerate": {},
    "taiji.solve": {"code": "3:Kw202200Fw62Dw4", "grid": [[{}]]},
}


def test_every_shipped_kind_names_its_rules_at_fields_it_has() -> None:
    for name in SHIPPED:
        schema = KINDS[name].params_schema
        assert rule_fields(schema), f"{name} names no rule across its fields"
        assert unknown_rule_fields(schema) == [], name


@pytest.mark.parametrize("name", SHIPPED)
def test_a_broken_rule_is_refused_at_a_field_it_names(name: str) -> None:
    with pytest.raises(ValidationError) as refused:
        KINDS[name].load_params(BROKEN[name])
    assert isinstance(refused.value.messages, dict)
    assert set(refused.value.messages) <= rule_fields(KINDS[name].params_schema), refused.value.messages


def test_rules_are_described_one_a_line_under_a_heading() -> None:
    rules = (CrossFieldRule("a", "a below b"), CrossFieldRule(WHOLE, "a or b"))
    heading, blank, *lines = describe_rules(rules).split("\n")
    assert "422" in heading and blank == ""
    assert lines == ["- `a`: a below b", "- `_schema`: a or b"]
    assert describe_rules(()) == ""


def test_a_schema_without_rules_names_none() -> None:
    class Plain(Schema):
        n = fields.Integer()

    assert rule_fields(Plain) == set() and unknown_rule_fields(Plain) == []
