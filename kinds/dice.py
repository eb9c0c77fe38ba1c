"""Intransitive dice."""

from typing import Any

from kinds.base import Kind, ResultTable
from pictures import dice as dice_picture
from schemas.dice import DiceParams, DiceResult


def dice_table(result: dict[str, Any]) -> list[ResultTable]:
    """The dashboard's table: one row per die."""
    dice = result.get("dice")
    if not isinstance(dice, list):
        return []
    faces = max((len(d) for d in dice if isinstance(d, list)), default=0)
    rows = [[f"die {i + 1}", *(d if isinstance(d, list) else [d])] for i, d in enumerate(dice)]
    return [ResultTable("Dice", ["", *[f"face {j + 1}" for j in range(faces)]], rows)]


KINDS = [
    Kind(
        name="dice",
        summary="Intransitive dice with the largest common win count",
        params_schema=DiceParams,
        result_schema=DiceResult,
        solver="puzzles.dice:solve",
        result_tables=dice_table,
        picture=lambda params, result: dice_picture.dice(result),
        example={"dice": 3, "faces": 6},
    ),
]
