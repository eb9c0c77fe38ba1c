"""Mastermind: the next guess, and whole games (sharded by secret)."""

from kinds.base import Kind
from pictures import mastermind as pegs
from schemas.mastermind import GuessParams, GuessResult, PlayParams, PlayResult

KINDS = [
    Kind(
        name="mastermind.guess",
        summary="Mastermind: the next guess for a history of feedback (SAT-sampled on huge spaces)",
        params_schema=GuessParams,
        result_schema=GuessResult,
        solver="puzzles.mastermind:guess",
        picture=pegs.game,
        example={
            "n": 4,
            "k": 6,
            "history": [
                {"guess": [0, 0, 1, 1], "black": 1, "white": 1},
                {"guess": [2, 3, 1, 4], "black": 0, "white": 2},
            ],
        },
    ),
    Kind(
        name="mastermind.play",
        summary="Mastermind: whole games against many secrets, sharded by secret; turns per game",
        params_schema=PlayParams,
        result_schema=PlayResult,
        solver="puzzles.mastermind:play",
        sharded=True,
        default_time_limit=3600.0,  # all its games' shards together
        result_items="games",
        picture=pegs.games,
        example={"n": 4, "k": 6, "secrets": {"sample": 50, "seed": 1}},
    ),
]
