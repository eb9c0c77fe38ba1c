"""The registry: each puzzle kind named once, with its params schema, result schema and solve function.

Adding a kind touches this file, one module under `puzzles/` and one under `schemas/`. Solve functions are
imported lazily so the API process never loads Z3.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from marshmallow import Schema, ValidationError

from puzzles.planetx.board import render_board  # pure Python, no Z3
from schemas.dice import DiceParams, DiceResult
from schemas.fields import UNSTORABLE, at_path, storable, unstorable
from schemas.leaving_earth import PlanParams, PlanResult
from schemas.mastermind import GuessParams, GuessResult, PlayParams, PlayResult
from schemas.planetx import (
    DeduceParams,
    DeduceResult,
    EnumerateParams,
    EnumerateResult,
    SimulateParams,
    SimulateResult,
)
from schemas.taiji import TaijiParams, TaijiResult

if TYPE_CHECKING:  # the API must not import Z3
    from puzzles.runtime import Run

SolveFunction = Callable[[dict[str, Any], "Run"], dict[str, Any]]


@dataclass(frozen=True)
class Kind:
    name: str
    summary: str
    params_schema: type[Schema]
    result_schema: type[Schema]
    solver: str  # "module:function", imported on first use
    #: the module also implements puzzles.sharding.ShardedPuzzle: the service runs it in shards
    sharded: bool = False
    #: a succeeded job with the same params is served again instead of solved again (unless `fresh`)
    cacheable: bool = False
    #: the job stores rows (e.g. boards) that clients page through and export
    has_rows: bool = False
    #: what a row is called in progress reports, and how one reads (e.g. a board's letters)
    rows_name: str = "rows"
    row_renderer: Callable[[dict[str, Any], int], str] | None = None

    def solve_function(self) -> SolveFunction:
        module, _, function = self.solver.partition(":")
        return getattr(self.puzzle(), function)

    def puzzle(self) -> Any:
        """The puzzle module (for sharded kinds: plan, run_shard and combine)."""
        return importlib.import_module(self.solver.partition(":")[0])

    def load_params(self, raw: Any) -> dict[str, Any]:
        """Validated params with defaults filled in; raises marshmallow.ValidationError, whose messages (like
        the params) PostgreSQL can store: a rejected batch item keeps them."""
        try:
            params = self.params_schema().load(raw if raw is not None else {})
        except ValidationError as err:
            raise ValidationError(storable(err.messages)) from None
        if (path := unstorable(params)) is not None:
            raise ValidationError(storable(at_path(path, [UNSTORABLE])))
        return params

    def dump_result(self, result: dict[str, Any]) -> dict[str, Any]:
        return self.result_schema().dump(result)

    def render_row(self, params: dict[str, Any], code: int) -> str:
        """The human form of a stored row (kinds with rows)."""
        return self.row_renderer(params, code) if self.row_renderer else str(code)


KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in [
        Kind(
            name="dice",
            summary="Intransitive dice with the largest common win count",
            params_schema=DiceParams,
            result_schema=DiceResult,
            solver="puzzles.dice:solve",
        ),
        Kind(
            name="planetx.enumerate",
            summary="Every possible board of The Search for Planet X (standard or expert), stored",
            params_schema=EnumerateParams,
            result_schema=EnumerateResult,
            solver="puzzles.planetx.enumerate:solve",
            sharded=True,
            cacheable=True,
            has_rows=True,
            rows_name="boards",
            row_renderer=render_board,
        ),
        Kind(
            name="planetx.deduce",
            summary="Planet X: what observations leave possible, and the next actions ranked by bits per day",
            params_schema=DeduceParams,
            result_schema=DeduceResult,
            solver="puzzles.planetx.deduce:solve",
        ),
        Kind(
            name="planetx.simulate",
            summary="Planet X: whole games on random boards under a policy; days to locate Planet X",
            params_schema=SimulateParams,
            result_schema=SimulateResult,
            solver="puzzles.planetx.simulate:solve",
            sharded=True,
        ),
        Kind(
            name="mastermind.guess",
            summary="Mastermind: the next guess for a history of feedback (SAT-sampled on huge spaces)",
            params_schema=GuessParams,
            result_schema=GuessResult,
            solver="puzzles.mastermind:guess",
        ),
        Kind(
            name="mastermind.play",
            summary="Mastermind: whole games against many secrets, sharded by secret; turns per game",
            params_schema=PlayParams,
            result_schema=PlayResult,
            solver="puzzles.mastermind:play",
            sharded=True,
        ),
        Kind(
            name="leaving_earth.plan",
            summary="Leaving Earth: the cheapest (or fastest, or lightest) mission plan over every route",
            params_schema=PlanParams,
            result_schema=PlanResult,
            solver="puzzles.leaving_earth.planner:plan",
        ),
        Kind(
            name="taiji.solve",
            summary="Taiji puzzles (Taiji Maker codes or a JSON grid): a solution, and whether it is unique",
            params_schema=TaijiParams,
            result_schema=TaijiResult,
            solver="puzzles.taiji.solver:solve",
        ),
    ]
}


def get_kind(name: str) -> Kind:
    return KINDS[name]


def register(kind: Kind) -> None:
    """Add a kind from a plugin module (named in ZOLVE_PLUGINS, comma-separated, imported below)."""
    KINDS[kind.name] = kind


def _load_plugins() -> None:
    for module in filter(None, (name.strip() for name in os.environ.get("ZOLVE_PLUGINS", "").split(","))):
        importlib.import_module(module)


_load_plugins()
