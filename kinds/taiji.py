"""Taiji puzzles: one solution (and whether it is unique), or every solution, stored as rows."""

import json
from dataclasses import asdict
from typing import Any

from kinds.base import Kind, Rows
from pictures import taiji as taiji_picture
from puzzles.taiji.code import puzzle_from_params  # pure Python, no Z3
from schemas.taiji import (
    TaijiEnumerateParams,
    TaijiEnumerateResult,
    TaijiParams,
    TaijiResult,
    TaijiSolutionPage,
)


def picture(params: dict[str, Any], result: dict[str, Any]) -> str:
    """The puzzle's tiles (from its code or grid) with the solution's lit tiles."""
    tiles = [[asdict(tile) if tile else None for tile in row] for row in puzzle_from_params(params).rows()]
    return taiji_picture.grid(tiles, result)


def first_solution_picture(params: dict[str, Any], result: dict[str, Any]) -> str:
    """The puzzle with the first solution found lit; the title says whether it is the only one."""
    first = {"solution": result.get("first_solution"), "status": result.get("summary", "")}
    return picture(params, {**first, "unique": result.get("unique")})


def render_solution(params: dict[str, Any], key: int, payload: bytes | None) -> str:
    """A stored solution (its rendering's rows, as JSON) as one line: the rows joined by '/'."""
    return "/".join(json.loads(payload or b"[]"))


SOLUTIONS = Rows(
    name="solutions",
    item="solution",
    render=render_solution,
    payloads=True,
    page_schema=TaijiSolutionPage,
    description="Every solution of a Taiji puzzle (taiji.enumerate), in the order found",
)

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
    Kind(
        name="taiji.enumerate",
        summary="Taiji puzzles or drafts: every solution (a full flip counting as the same), stored as rows",
        params_schema=TaijiEnumerateParams,
        result_schema=TaijiEnumerateResult,
        solver="puzzles.taiji.enumerate:solve",
        rows=SOLUTIONS,
        picture=first_solution_picture,
        example={"code": "3:Kw202200Fw62Dw4", "max_solutions": 100},
    ),
]
