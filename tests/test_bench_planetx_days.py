"""bench/planetx_days.py's rules lifted: the same game replayed with the sky's limit and the conference's
day lifted."""

from typing import Any

import numpy as np

from bench.planetx_days import days_with_rules_lifted, whole_sky
from puzzles.planetx import simulate
from puzzles.planetx.actions import Action, sky_start_after, visible_sectors
from puzzles.planetx.board import MODES
from puzzles.planetx.boardset import BoardSet, all_boards
from puzzles.runtime import Run


def test_the_whole_sky_decider_surveys_beyond_the_visible_sky() -> None:
    mode = MODES["standard"]
    outside: list[Action] = []

    def watching(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
        move = whole_sky(policy, game, boards, counts)
        visible = set(visible_sectors(mode, sky_start_after(mode, game.days)))
        if isinstance(move, Action) and not set(move.sectors) <= visible:
            outside.append(move)
        return move

    with Run(600) as run:
        everything = all_boards(mode, run)
        for index in range(10):
            secret = simulate.secret_of({"seed": 31}, index, len(everything))
            game = simulate.play(
                everything, secret, "research", run, 300, [31, index], [10], decider=watching
            )
            assert game["found"]
    assert outside, "ten games and not one survey or target outside the visible sky"


def test_a_game_is_played_as_dealt_then_with_each_rule_lifted() -> None:
    played = days_with_rules_lifted(("standard", "uniform", 31, 0))
    assert len(played) == 3 and all(5 <= days < 300 and wrong >= 0 for days, wrong in played)
    with Run(600) as run:
        everything = all_boards(MODES["standard"], run)
        secret = simulate.secret_of({"seed": 31}, 0, len(everything))
        dealt = simulate.play(everything, secret, "research", run, 300, [31, 0], [10])
        sky = simulate.play(everything, secret, "research", run, 300, [31, 0], [10], decider=whole_sky)
        early = simulate.play(everything, secret, "research", run, 300, [31, 0], [1])
    assert played == [(g["days"], g["wrong_locates"]) for g in (dealt, sky, early)]
