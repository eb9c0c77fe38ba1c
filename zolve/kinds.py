"""The registry: each puzzle kind named once, with its params schema, result schema and solve function.

Adding a kind touches this file, one module under `puzzles/` and one under `schemas/`. Solve functions are
imported lazily so the API process never loads Z3.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from marshmallow import Schema

from schemas.dice import DiceParams, DiceResult

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

    def solve_function(self) -> SolveFunction:
        module, _, function = self.solver.partition(":")
        return getattr(importlib.import_module(module), function)

    def load_params(self, raw: Any) -> dict[str, Any]:
        """Validated params with defaults filled in; raises marshmallow.ValidationError."""
        return self.params_schema().load(raw if raw is not None else {})

    def dump_result(self, result: dict[str, Any]) -> dict[str, Any]:
        return self.result_schema().dump(result)


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
    ]
}


def get_kind(name: str) -> Kind:
    return KINDS[name]
