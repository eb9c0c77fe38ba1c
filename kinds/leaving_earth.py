"""Leaving Earth mission plans (batches of them go through /batches)."""

from kinds.base import Kind
from schemas.leaving_earth import PlanParams, PlanResult

KINDS = [
    Kind(
        name="leaving_earth.plan",
        summary="Leaving Earth: the cheapest (or fastest, or lightest) mission plan over every route",
        params_schema=PlanParams,
        result_schema=PlanResult,
        solver="puzzles.leaving_earth.planner:plan",
        cli="zolve.commands.les:les",
    ),
]
