"""Taiji puzzles."""

from dataclasses import asdict
from typing import Any

from kinds.base import Kind
from pictures import taiji as taiji_picture
from puzzles.taiji.code import puzzle_from_params  # pure Python, no Z3
from schemas.taiji import TaijiParams, TaijiResult


def picture(params: dict[str, Any], result: dict[str, Any]) -> str:
    """The puzzle's tiles (from its code or grid) with the solution's lit tiles."""
    tiles = [[asdict(tile) if tile else None for tile in row] for row in puzzle_from_params(params).rows()]
    return taiji_picture.grid(tiles, result)


KINDS = [
    Kind(
        name="taiji.solve",
        summary="Taiji puzzles (Taiji Maker codes or a JSON grid): a solution, and whether it is unique",
        params_schema=TaijiParams,
        result_schema=TaijiResult,
        solver="puzzles.taiji.solver:solve",
        picture=picture,
        example={"code": "3:Kw202200Fw62Dw4", "unique": True},
    ),
]
