"""A kind checks itself when it is defined (issue 33, item 3): flags that disagree fail at start-up with
a message that says what to change, instead of registering endpoints that can never answer or a cache
that never hits."""

from __future__ import annotations

from dataclasses import replace

import pytest
from marshmallow import Schema, fields

from kinds import KINDS, register
from kinds.base import Kind, KindError
from schemas.rules import CrossFieldRule

ENUMERATE = KINDS["planetx.enumerate"]
DICE = KINDS["dice"]


class Params(Schema):
    n = fields.Integer(required=True)


class MisruledParams(Params):
    cross_field_rules = (CrossFieldRule("m", "a rule at a field the params have not"),)


class Result(Schema):
    games = fields.List(fields.Integer())
    total = fields.Integer()


def plain(**changes) -> Kind:
    defaults = {
        "name": "test.contract",
        "summary": "a kind for the contract's tests",
        "params_schema": Params,
        "result_schema": Result,
        "solver": "tests.plugins:crash",
    }
    return Kind(**{**defaults, **changes})


def test_a_sound_kind_is_defined_and_every_shipped_kind_is_sound() -> None:
    assert plain(result_items="games", example={"n": 3}, default_time_limit=5.0).problems() == []
    assert all(kind.problems() == [] for kind in KINDS.values())


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"rows": replace(ENUMERATE.rows, name="Boards/x")}, "rows' name 'Boards/x' must be one lower-case"),
        ({"cacheable": True}, "cacheable needs rows"),
        ({"cacheable": True, "sharded": True}, "cacheable needs rows"),
        ({"pinned": lambda db: []}, "pinned keeps jobs' rows past retention: it needs rows"),
        ({"result_items": "total"}, "result_items names 'total', which is not a list"),
        ({"result_items": "nothing"}, "result_items names 'nothing'"),
        ({"default_time_limit": 0.0}, "default_time_limit must be a positive"),
        ({"example": {"n": "three"}}, "its example is refused by its params schema"),
        ({"params_schema": MisruledParams}, "its params' cross_field_rules name fields it has not: m"),
        ({"solver": "tests.plugins.crash"}, "solver must be a 'module:attribute' reference"),
        ({"cli": "zolve"}, "cli must be a 'module:attribute' reference"),
        ({"name": "Planet X"}, "its name must be lower-case words joined by dots"),
    ],
)
def test_flags_that_disagree_fail_when_the_kind_is_defined(change: dict, says: str) -> None:
    with pytest.raises(KindError, match="inconsistent") as refused:
        plain(**change)
    assert says in str(refused.value)


def test_every_problem_is_named_at_once() -> None:
    with pytest.raises(KindError) as refused:
        plain(cacheable=True, default_time_limit=-1.0)
    assert "cacheable needs rows" in str(refused.value) and "default_time_limit" in str(refused.value)


def test_a_kind_stores_rows_whether_it_is_sharded_or_not() -> None:
    """Rows are stored by shards or, for a kind solved whole, with its result (services.running)."""
    assert ENUMERATE.rows is not None and ENUMERATE.cacheable
    assert replace(ENUMERATE, sharded=False).problems() == []
    assert plain(rows=ENUMERATE.rows, cacheable=True).problems() == []


def test_a_second_kind_of_a_taken_name_is_refused_at_registration() -> None:
    register(DICE)  # the same kind again changes nothing
    with pytest.raises(KindError, match="two kinds are named 'dice'"):
        register(replace(DICE, summary="another dice"))
    assert KINDS["dice"] is DICE
