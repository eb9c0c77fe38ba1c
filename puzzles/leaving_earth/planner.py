"""Plan a mission: search every route and keep the best plan on the full lexicographic key.

Routes go in a fixed order (total difficulty, length, codes), which tends to meet good plans early and makes
ties deterministic: a later route replaces the best plan only when it is strictly better. For each route the
whole-rocket relaxation (`bounds`) gives the least key that could still beat the best plan; if there is none
the route is skipped, otherwise its Z3 model is asked for a plan at exactly that key, and only when the
relaxation was not tight does Z3's `Optimize` search the route above it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from puzzles.leaving_earth.bounds import Relaxation, best_key
from puzzles.leaving_earth.data import ROCKETS, Maneuver
from puzzles.leaving_earth.model import RouteModel, RoutePlan
from puzzles.leaving_earth.request import Request, RequestError, build_request
from puzzles.leaving_earth.routes import Leg, routes, ways_to_fly
from puzzles.runtime import Run

#: routes considered at most (a route with several waypoints multiplies its legs' paths)
MAX_ROUTES = 100_000


def plan(params: dict[str, Any], run: Run) -> dict[str, Any]:
    """The kind's solve function: the best mission plan, or why there is none."""
    started = time.perf_counter()
    try:
        request = build_request(params)
    except RequestError as exc:
        return {"status": "invalid", "message": str(exc)}
    with run.interruptible():
        best, counts = search_routes(request, run, params.get("engine", "bounded"))
    search = {**counts, "seconds": round(time.perf_counter() - started, 4)}
    if best is None:
        return {"status": "infeasible", "message": infeasible_message(request, search), "search": search}
    return {
        "status": "optimal",
        **best.mission,
        "route": best.route,
        "objectives": list(request.objectives),
        "search": search,
    }


def search_routes(
    request: Request, run: Run, engine: str = "bounded"
) -> tuple[RoutePlan | None, dict[str, int]]:
    """The best plan over every route.

    `bounded`: for each route, the relaxed optimum below the best plan so far (`bounds`); Z3 is asked for a
    plan at exactly that key, and only when the relaxation was not tight runs `Optimize`.
    `optimize`: Z3's `Optimize` on every route, pruned only by the best plan so far (slow; cross-checks).
    """
    candidates, considered = _candidates(request)
    relaxation = _relaxation(request)
    run.progress(phase="solving", routes=considered, candidates=len(candidates))
    ctx = run.context()
    best: RoutePlan | None = None
    stats = {"routes": considered, "searched": len(candidates), "z3_plans": 0, "z3_optimizations": 0}
    for legs in candidates:
        run.raise_if_stopped()
        bound = None
        if engine == "bounded":
            bound = best_key(legs, relaxation, best.key if best else None)
            if bound is None:
                continue
        model = RouteModel(legs, request, ctx)
        found = None
        if bound is not None:
            stats["z3_plans"] += 1
            found = model.plan_at(run, bound)
        if found is None:
            stats["z3_optimizations"] += 1
            found = model.optimize(run, best.key if best else None, bound)
        if found is not None and (best is None or found.key < best.key):
            best = found
    return best, stats


def _candidates(request: Request) -> tuple[list[list[Leg]], int]:
    """Every route as legs, in a deterministic order that tends to find good plans first."""
    payloads = request.payloads_after_stops()
    ordered, considered = [], 0
    for route in routes(request.stops, request.launch, MAX_ROUTES):
        considered += 1
        legs = _legs(route, payloads, request)
        if legs is not None:
            codes = tuple(f"{leg.maneuver.origin}>{leg.maneuver.destination}" for leg in legs)
            ordered.append(((sum(leg.maneuver.difficulty for leg in legs), len(legs), codes), legs))
    ordered.sort(key=lambda item: item[0])
    return [legs for _, legs in ordered], considered


def _legs(route: Sequence[Sequence[Maneuver]], payloads: list[int], request: Request) -> list[Leg] | None:
    legs = []
    for path, payload in zip(route, payloads, strict=False):
        for maneuver in path:
            if maneuver.slingshot and request.year is None:
                return None  # a slingshot needs a calendar year to check its window
            legs.append(Leg(maneuver, ways_to_fly(maneuver, request.aerobraking, request.faster), payload))
    return legs


def _relaxation(request: Request) -> Relaxation:
    return Relaxation(
        rockets=tuple((name, request.allowed(name)[1]) for name in ROCKETS if request.allowed(name)[1] > 0),
        ions=request.allowed("ion"),
        free_ions=request.free_ions,
        rendezvous=request.rendezvous,
        max_years=request.time[1],
        max_cost=request.cost[1] if request.cost is not None else None,
        objectives=request.objectives,
        min_cost=request.cost[0] if request.cost is not None else 0,
        min_years=request.time[0],
    )


def infeasible_message(request: Request, search: dict[str, Any]) -> str:
    stops = " → ".join(request.stops)
    message = f"no plan for {stops} with payload {request.payload} meets the constraints"
    if request.year is None and search["searched"] < search["routes"]:
        message += "; routes with slingshot maneuvers need the year the journey starts (year, -y)"
    return message
