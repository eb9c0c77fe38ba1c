"""Planet X params: sectors are checked against the mode (standard has 12 sectors, expert 18)."""

from __future__ import annotations

import pytest
from marshmallow import ValidationError

from schemas.planetx import DeduceParams, EnumerateParams


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
