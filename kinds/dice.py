"""Intransitive dice."""

from kinds.base import Kind
from schemas.dice import DiceParams, DiceResult

KINDS = [
    Kind(
        name="dice",
        summary="Intransitive dice with the largest common win count",
        params_schema=DiceParams,
        result_schema=DiceResult,
        solver="puzzles.dice:solve",
    ),
]
