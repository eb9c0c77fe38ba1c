"""Taiji puzzles."""

from kinds.base import Kind
from schemas.taiji import TaijiParams, TaijiResult

KINDS = [
    Kind(
        name="taiji.solve",
        summary="Taiji puzzles (Taiji Maker codes or a JSON grid): a solution, and whether it is unique",
        params_schema=TaijiParams,
        result_schema=TaijiResult,
        solver="puzzles.taiji.solver:solve",
    ),
]
