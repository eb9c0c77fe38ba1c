"""Leaving Earth mission plans (batches of them go through /batches)."""

from typing import Any

from kinds.base import Kind, ResultTable, cell
from pictures import leaving_earth as plan_picture
from schemas.leaving_earth import PlanParams, PlanResult

_PLAN_SUMMARY = ("components", "payload", "mass", "cost", "time", "start", "end")
_PLAN_COLUMNS = ("origin", "destination", "difficulty", "components", "time", "aerobraking", "slingshot")
#: calendar years: read as 1960, never as a count (1,960)
_YEARS = ("year", "start", "end")


def _cell(name: str, value: Any) -> Any:
    return str(value) if name in _YEARS and isinstance(value, int) else cell(value)


def plan_tables(result: dict[str, Any]) -> list[ResultTable]:
    """The dashboard's tables of a mission plan: the totals, then one row per manoeuvre."""
    if not isinstance(result.get("plan"), list):
        return []
    steps = [s for s in result["plan"] if isinstance(s, dict)]
    columns = [c for c in _PLAN_COLUMNS if any(c in s for s in steps)]
    columns += sorted({k for s in steps for k in s} - set(columns))
    summary = [[k, _cell(k, result[k])] for k in _PLAN_SUMMARY if k in result]
    tables = [ResultTable("Mission", ["", "value"], summary)] if summary else []
    tables.append(
        ResultTable(
            "Plan",
            ["step", *columns],
            [[i + 1, *[_cell(c, s.get(c)) for c in columns]] for i, s in enumerate(steps)],
        )
    )
    return tables


KINDS = [
    Kind(
        name="leaving_earth.plan",
        summary="Leaving Earth: the cheapest (or fastest, or lightest) mission plan over every route",
        params_schema=PlanParams,
        result_schema=PlanResult,
        solver="puzzles.leaving_earth.planner:plan",
        result_tables=plan_tables,
        picture=lambda params, result: plan_picture.plan(result),
        example={"origin": "E", "destination": "L", "payload": 1, "minimize": ["cost"]},
        cli="zolve.commands.les:les",
    ),
]
