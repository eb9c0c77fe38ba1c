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


@pytest.mark.parametrize("sector", [0, 19, 40])
def test_a_sector_past_every_mode_says_both_modes_sectors(sector: int) -> None:
    with pytest.raises(ValidationError) as caught:
        EnumerateParams().load({"mode": "standard", "constraints": _facts(sector)})
    expected = ["a sector is 1 to 12 standard, 1 to 18 expert"]
    assert caught.value.messages == {"constraints": {0: {"sector": expected}}}


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


def test_starting_facts_load_and_are_bounded_by_the_difficulty() -> None:
    facts = [{"sector": s, "object": "asteroid"} for s in range(1, 5)]
    loaded = DeduceParams().load({"mode": "standard", "difficulty": "experienced", "starting_facts": facts})
    assert loaded["starting_facts"] == facts
    with pytest.raises(ValidationError) as refused:
        DeduceParams().load({"mode": "standard", "difficulty": "experienced", "starting_facts": facts * 2})
    assert refused.value.messages == {"starting_facts": ["an experienced game deals 4 starting facts, not 8"]}
    bad = [{"sector": 13, "object": "comet"}, {"sector": 2, "object": "planet_x"}]
    with pytest.raises(ValidationError) as refused:
        DeduceParams().load({"mode": "standard", "starting_facts": bad})
    assert refused.value.messages == {
        "starting_facts": {1: {"object": ["Must be one of: asteroid, comet, dwarf_planet, gas_cloud."]}}
    }
    with pytest.raises(ValidationError) as refused:
        DeduceParams().load({"mode": "standard", "starting_facts": bad[:1]})
    beyond = {"sector": ["standard mode has sectors 1 to 12"]}
    assert refused.value.messages == {"starting_facts": {0: beyond}}


def test_simulations_take_a_difficulty_and_a_clue_model() -> None:
    loaded = SimulateParams().load({"mode": "expert", "difficulty": "youth", "clue_model": "weighted"})
    assert loaded["clue_model_known"] is False and loaded["difficulty"] == "youth"
    assert SimulateParams().load({"mode": "standard"})["clue_model"] == "uniform"
    with pytest.raises(ValidationError) as refused:
        SimulateParams().load({"mode": "standard", "difficulty": "hard", "clue_model": "app"})
    assert set(refused.value.messages) == {"difficulty", "clue_model"}
