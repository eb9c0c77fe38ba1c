import pytest
from marshmallow import ValidationError

from schemas.mastermind import GuessParams, GuessResult, PlayParams, PlayResult


def entry(guess: list[int], black: int, white: int) -> dict:
    return {"guess": guess, "black": black, "white": white}


def test_guess_defaults_are_filled() -> None:
    assert GuessParams().load({"n": 4, "k": 6}) == {
        "n": 4,
        "k": 6,
        "history": [],
        "strategy": "best",
        "seed": 0,
        "samples": 100,
    }


def test_a_valid_history_loads_as_given() -> None:
    history = [entry([0, 0, 1, 1], 1, 1), entry([2, 3, 4, 5], 0, 4)]
    loaded = GuessParams().load({"n": 4, "k": 6, "history": history, "strategy": "minimax", "seed": 7})
    assert loaded["history"] == history and loaded["strategy"] == "minimax" and loaded["seed"] == 7


def test_play_defaults_are_filled_and_every_secrets_form_loads() -> None:
    load = PlayParams().load
    assert load({"n": 4, "k": 6, "secrets": "all"}) == {
        "n": 4,
        "k": 6,
        "secrets": "all",
        "strategy": "best",
        "seed": 0,
        "samples": 100,
        "max_turns": None,
    }
    assert load({"n": 16, "k": 6, "secrets": {"sample": 20}})["secrets"] == {"sample": 20, "seed": 0}
    assert load({"n": 2, "k": 3, "secrets": [[0, 2], [1, 1]], "max_turns": 5})["secrets"] == [[0, 2], [1, 1]]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"k": 6}, "n"),
        ({"n": 0, "k": 6}, "n"),
        ({"n": 65, "k": 6}, "n"),
        ({"n": 4, "k": 1}, "k"),
        ({"n": 4, "k": 33}, "k"),
        ({"n": "4", "k": 6}, "n"),
        ({"n": 4, "k": 6, "strategy": "random"}, "strategy"),
        ({"n": 4, "k": 6, "samples": 0}, "samples"),
        ({"n": 4, "k": 6, "samples": 201}, "samples"),
        ({"n": 4, "k": 6, "seed": -1}, "seed"),
        ({"n": 4, "k": 6, "history": [entry([0, 0, 1], 0, 0)]}, "history"),
        ({"n": 4, "k": 6, "history": [entry([0, 0, 1, 6], 0, 0)]}, "history"),
        ({"n": 4, "k": 6, "history": [entry([0, 0, 1, 1], 3, 2)]}, "history"),
        ({"n": 4, "k": 6, "history": [entry([0, 0, 1, 1], 3, 1)]}, "history"),
        ({"n": 4, "k": 6, "history": [entry([0, 0, 1, 1], -1, 0)]}, "history"),
        ({"n": 4, "k": 6, "history": [{"guess": [0, 0, 1, 1], "black": 1}]}, "history"),
        ({"n": 4, "k": 6, "history": [entry([0, 0, 1, 1], 0, 0)] * 201}, "history"),
        ({"n": 4, "k": 6, "colour": "red"}, "colour"),
    ],
)
def test_bad_guess_params_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        GuessParams().load(params)
    assert field in err.value.messages


def test_history_messages_say_which_entry_and_why() -> None:
    history = [entry([0, 0, 1, 1], 1, 0), entry([0, 0, 1, 1], 2, 3)]
    with pytest.raises(ValidationError) as err:
        GuessParams().load({"n": 4, "k": 6, "history": history})
    assert err.value.messages["history"] == ["history[1]: black + white = 5 is more than n = 4"]
    with pytest.raises(ValidationError) as err:
        GuessParams().load({"n": 4, "k": 6, "history": [entry([0, 0, 9, 1], 0, 0)]})
    assert err.value.messages["history"] == ["history[0]: the guess uses a colour above k - 1 = 5"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"n": 4, "k": 6}, "secrets"),
        ({"n": 5, "k": 6, "secrets": "all"}, "secrets"),
        ({"n": 4, "k": 6, "secrets": "every"}, "secrets"),
        ({"n": 4, "k": 6, "secrets": []}, "secrets"),
        ({"n": 4, "k": 6, "secrets": [[0, 1, 2]]}, "secrets"),
        ({"n": 4, "k": 6, "secrets": [[0, 1, 2, 6]]}, "secrets"),
        ({"n": 4, "k": 6, "secrets": [[0, 1, 2, "3"]]}, "secrets"),
        ({"n": 4, "k": 6, "secrets": [[0, 1, 2, 3]] * 10_001}, "secrets"),
        ({"n": 4, "k": 6, "secrets": {"sample": 1297}}, "secrets"),
        ({"n": 16, "k": 6, "secrets": {"sample": 10_001}}, "secrets"),
        ({"n": 16, "k": 6, "secrets": {"sample": 0}}, "secrets"),
        ({"n": 16, "k": 6, "secrets": {"sample": 5, "seed": "x"}}, "secrets"),
        ({"n": 16, "k": 6, "secrets": {"sample": 5, "seed": 10**400}}, "secrets"),  # was taken
        ({"n": 16, "k": 6, "secrets": {"sample": 5, "seed": 2**63}}, "secrets"),
        ({"n": 16, "k": 6, "secrets": {"sample": 10**400}}, "secrets"),
        ({"n": 16, "k": 6, "secrets": {"count": 5}}, "secrets"),
        ({"n": 4, "k": 6, "secrets": "all", "max_turns": 0}, "max_turns"),
        ({"n": 4, "k": 6, "secrets": "all", "strategy": "knuth"}, "strategy"),
    ],
)
def test_bad_play_params_name_the_field(params: dict, field: str) -> None:
    with pytest.raises(ValidationError) as err:
        PlayParams().load(params)
    assert field in err.value.messages


def test_all_secrets_is_refused_above_5000_codes_with_a_reason() -> None:
    assert PlayParams().load({"n": 4, "k": 8, "secrets": "all"})["secrets"] == "all"  # 4096 codes
    with pytest.raises(ValidationError) as err:
        PlayParams().load({"n": 7, "k": 4, "secrets": "all"})  # 16384 codes
    assert "over 5000" in err.value.messages["secrets"][0]


def test_results_dump_every_field() -> None:
    contradiction = {
        "status": "contradiction",
        "guess": None,
        "consistent": False,
        "remaining": 0,
        "remaining_at_least": 0,
        "strategy": "best",
        "note": None,
        "seconds": 0.01,
        "error": {"code": 422, "message": "no code fits history guesses #0 and #2", "entries": [0, 2]},
    }
    assert GuessResult().dump(contradiction) == contradiction
    game = {
        "index": 0,
        "secret": [0, 1],
        "guesses": [entry([0, 0], 1, 0), entry([0, 1], 2, 0)],
        "turns": 2,
        "solved": True,
        "seconds": 0.002,
    }
    play = {
        "games": [game],
        "games_count": 1,
        "avg_turns": 2.0,
        "max_turns": 2,
        "turn_histogram": {"2": 1},
        "unsolved": 0,
        "seconds_per_game": 0.002,
        "seconds": 0.002,
        "strategy": "best",
        "note": None,
    }
    assert PlayResult().dump(play) == play
