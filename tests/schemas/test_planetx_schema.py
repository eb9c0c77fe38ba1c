"""Planet X params: sectors are checked against the mode (standard has 12 sectors, expert 18)."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from schemas.planetx import DeduceParams, EnumerateParams, SimulateParams


def _facts(*sectors: int) -> list[dict]:
    return [{"sector": sector, "object": "comet", "present": False} for sector in sectors]


@pytest.mark.parametrize("sector", [13, 18])
def test_enumerate_facts_beyond_a_standard_board_are_field_errors(sector: int) -> None:
    # once validated, then an IndexError in the worker
    with pytest.raises(ValidationError) as caught:
        EnumerateParams().load({"mode": "standard", "constraints": _facts(1, sector)})
    assert caught.value.messages == {"constraints": {1: {"sector": ["standard mode has sectors 1 to 12"]}}}


def test_enumerate_facts_on_every_sector_of_the_mode_load() -> None:
    assert len(EnumerateParams().load({"mode": "standard", "constraints": _facts(1, 12)})["constraints"]) == 2
    assert len(EnumerateParams().load({"mode": "expert", "constraints": _facts(13, 18)})["constraints"]) == 2


def test_enumerate_reports_bad_facts_and_a_bad_mode_without_crashing() -> None:
    with pytest.raises(ValidationError) as caught:
        EnumerateParams().load({"mode": "huge", "constraints": _facts(19)})
    assert set(caught.value.messages) == {"mode", "constraints"}


def test_deduce_observations_beyond_a_standard_board_are_field_errors() -> None:
    observation = {"type": "target", "sector": 13, "seen": "comet"}
    with pytest.raises(ValidationError) as caught:
        DeduceParams().load({"mode": "standard", "observations": [observation]})
    assert caught.value.messages == {"observations": {0: {"sector": ["standard mode has sectors 1 to 12"]}}}


def test_research_topics_load_and_bad_ones_are_field_errors() -> None:
    loaded = DeduceParams().load(
        {"mode": "standard", "topics": {"A": ["comet", "asteroid"], "F": ["gas_cloud", "empty"]}}
    )
    assert loaded["topics"]["F"] == ["gas_cloud", "empty"] and loaded["researched"] == []
    assert loaded["last_action_research"] is False and loaded["weigh_clues"] is True
    assert DeduceParams().load({"mode": "standard", "weigh_clues": False})["weigh_clues"] is False
    with pytest.raises(ValidationError) as caught:
        DeduceParams().load({"mode": "standard", "weigh_clues": "sometimes"})
    assert caught.value.messages == {"weigh_clues": ["Not a valid boolean."]}
    bad = {"A": ["empty", "comet"], "B": ["comet", "planet_x"], "C": ["comet"]}
    with pytest.raises(ValidationError) as caught:
        DeduceParams().load({"mode": "standard", "topics": bad, "researched": ["G"]})
    messages = caught.value.messages
    assert "subject is one of" in messages["topics"]["A"]["value"][0]
    assert "other object is one of" in messages["topics"]["B"]["value"][0]
    assert messages["topics"]["C"]["value"] == ["Length must be 2."]
    assert messages["researched"] == {0: ["Must be one of: A, B, C, D, E, F."]}
    with pytest.raises(ValidationError) as caught:
        DeduceParams().load({"mode": "standard", "topics": {"Z": ["comet", "comet"]}})
    assert "key" in caught.value.messages["topics"]["Z"]


def test_conference_spaces_are_checked_against_the_mode() -> None:
    assert SimulateParams().load({"mode": "expert", "conference_spaces": [7, 16]})["conference_spaces"] == [
        7,
        16,
    ]
    assert SimulateParams().load({"mode": "standard"})["policy"] == "research"
    with pytest.raises(ValidationError) as caught:
        SimulateParams().load({"mode": "standard", "conference_spaces": [13]})
    assert caught.value.messages == {"conference_spaces": {0: ["the standard track has spaces 2 to 12"]}}
