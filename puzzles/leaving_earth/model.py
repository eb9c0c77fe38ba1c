"""One route as a Z3 `Optimize` model: rockets per maneuver, ion thrusters, years, and the objectives.

Each maneuver fires its own expendable rockets, which every earlier maneuver has to carry. Ion thrusters are
bought once and carried (mass 1 each) until detached; they give 5 thrust per year a maneuver takes. With
rendezvous they may be detached once they are no longer needed, otherwise they ride to the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import z3

from puzzles.leaving_earth.data import (
    ION_COST,
    ION_MASS,
    ION_THRUST_PER_YEAR,
    LAST_YEAR,
    LOCATIONS,
    ROCKETS,
    SLINGSHOT_WINDOWS,
)
from puzzles.leaving_earth.request import Request
from puzzles.leaving_earth.routes import Leg
from puzzles.runtime import Run


@dataclass
class RoutePlan:
    """The best plan on one route: its objective key and the plan in `les`' output shape."""

    key: tuple[int, ...]
    mission: dict[str, Any]
    route: list[str]


def slingshot_years(window: str, earliest: int, years: int) -> list[int]:
    first, every = SLINGSHOT_WINDOWS[window]
    return [
        year for year in range(first, LAST_YEAR + 1, every) if year >= earliest and year + years <= LAST_YEAR
    ]


class RouteModel:
    def __init__(self, legs: Sequence[Leg], request: Request, ctx: z3.Context):
        self.legs, self.request, self.ctx = legs, request, ctx
        self.assertions: list[z3.BoolRef] = []
        self.rockets = [name for name in ROCKETS if request.allowed(name)[1] > 0]
        self._variables()
        self._constraints()
        self.totals = self._totals()

    def _add(self, *constraints: z3.BoolRef) -> None:
        self.assertions.extend(constraints)

    def _int(self, name: str, low: int, high: int) -> z3.ArithRef:
        var = z3.Int(name, self.ctx)
        self._add(var >= low, var <= high)
        return var

    def _variables(self) -> None:
        request, count = self.request, len(self.legs)
        self.counts = [
            {name: self._int(f"{name}_{j}", 0, request.allowed(name)[1]) for name in self.rockets}
            for j in range(count)
        ]
        self.ions = self._int("ions", *request.allowed("ion"))
        self.ion_max = request.allowed("ion")[1]
        self.time = [self._int(f"time_{j}", 0, request.time[1]) for j in range(count)]
        self.way = [self._int(f"way_{j}", 0, len(leg.ways) - 1) for j, leg in enumerate(self.legs)]
        self.attached = [z3.Bool(f"ions_on_{j}", self.ctx) for j in range(count)]
        self.year = (
            [self._int(f"year_{j}", request.year, LAST_YEAR) for j in range(count)] if request.year else []
        )

    def _rocket_sum(self, j: int, attribute: str) -> z3.ArithRef:
        return z3.Sum(
            [self.counts[j][name] * getattr(ROCKETS[name], attribute) for name in self.rockets] or [0]
        )

    def _ion_years(self, j: int) -> z3.ArithRef:
        """ions × years of maneuver j, kept linear: the ion count is a small bounded integer."""
        term = z3.IntVal(0, self.ctx)
        for n in range(1, self.ion_max + 1):
            term = z3.If(self.ions == n, n * self.time[j], term)
        return term

    def _constraints(self) -> None:
        legs = self.legs
        carried = z3.IntVal(0, self.ctx)  # mass of the rockets of the maneuvers after this one
        for j in reversed(range(len(legs))):
            rockets_mass = self._rocket_sum(j, "mass")
            ion_mass = z3.If(self.attached[j], self.ions * ION_MASS, 0)
            mass = legs[j].payload + rockets_mass + carried + ion_mass
            thrust = self._rocket_sum(j, "thrust") + z3.If(
                self.attached[j], ION_THRUST_PER_YEAR * self._ion_years(j), 0
            )
            for index, way in enumerate(legs[j].ways):
                self._add(
                    z3.Implies(
                        self.way[j] == index, z3.And(thrust >= way.difficulty * mass, self._years(j, way))
                    )
                )
            carried = carried + rockets_mass
        self._ion_attachment()
        if self.year and self.request.year:
            self._calendar(self.request.year)

    def _years(self, j: int, way: Any) -> z3.BoolRef:
        if way.years is None:
            return self.time[j] == 0
        if way.fixed:
            return self.time[j] == way.years
        return self.time[j] >= way.years

    def _ion_attachment(self) -> None:
        for j, on in enumerate(self.attached):
            if not self.request.rendezvous:
                self._add(on)
            elif j:  # once detached, ions stay behind
                self._add(z3.Implies(on, self.attached[j - 1]))

    def _calendar(self, earliest: int) -> None:
        year, time = self.year, self.time
        for j in range(1, len(year)):
            self._add(year[j] == year[j - 1] + time[j - 1])
        self._add(year[-1] + time[-1] <= LAST_YEAR)
        for j, leg in enumerate(self.legs):
            window = leg.maneuver.slingshot
            if window:
                starts = slingshot_years(window, earliest, leg.maneuver.years or 0)
                self._add(z3.Or([year[j] == start for start in starts] or [z3.BoolVal(False, self.ctx)]))

    def _totals(self) -> dict[str, z3.ArithRef]:
        request = self.request
        per_type = {name: z3.Sum([stage[name] for stage in self.counts]) for name in self.rockets}
        for name, total in per_type.items():
            low, high = request.allowed(name)
            self._add(total >= low, total <= high)
        paid_ions = z3.If(self.ions > request.free_ions, self.ions - request.free_ions, 0)
        cost = (
            z3.Sum([total * ROCKETS[name].cost for name, total in per_type.items()] or [0])
            + paid_ions * ION_COST
        )
        mass = (
            z3.Sum([total * ROCKETS[name].mass for name, total in per_type.items()] or [0])
            + self.ions * ION_MASS
        )
        time = z3.Sum(self.time)
        if request.cost is not None:
            self._add(cost >= request.cost[0], cost <= request.cost[1])
        self._add(time >= request.time[0], time <= request.time[1])
        return {"cost": cost, "mass": mass, "time": time}

    def objectives(self) -> list[z3.ArithRef]:
        return [self.totals[name] for name in self.request.objectives]

    def optimize(
        self, run: Run, better_than: Sequence[int] | None = None, at_least: Sequence[int] | None = None
    ) -> RoutePlan | None:
        """The lexicographic optimum with Z3's `Optimize`, if it beats `better_than`; `at_least` is a
        known lower bound of the key (a valid cut that spares Z3 proving it)."""
        opt = z3.Optimize(ctx=self.ctx)
        opt.add(self.assertions)
        objectives = self.objectives()
        if better_than is not None:
            opt.add(_lexicographically_less(objectives, better_than))
        if at_least is not None:
            opt.add(z3.Not(_lexicographically_less(objectives, at_least)))
        for objective in objectives:
            opt.minimize(objective)
        if self.year:  # among equal plans: arrive soonest, then leave as late as possible
            opt.minimize(self.year[-1] + self.time[-1])
            opt.maximize(self.year[0])
        if run.check(opt) != z3.sat:
            return None
        return self._plan(opt.model())

    def plan_at(self, run: Run, key: Sequence[int]) -> RoutePlan | None:
        """A plan whose objectives are exactly `key` (a proven lower bound: such a plan is optimal)."""
        solver = z3.SolverFor("QF_LIA", ctx=self.ctx)
        solver.add(self.assertions)
        solver.add([objective == value for objective, value in zip(self.objectives(), key, strict=True)])
        if run.check(solver) != z3.sat:
            return None
        if self.year:
            self._tighten(run, solver, self.year[-1] + self.time[-1], smaller=True)
            self._tighten(run, solver, self.year[0], smaller=False)
        return self._plan(solver.model())

    def _tighten(self, run: Run, solver: z3.Solver, term: z3.ArithRef, smaller: bool) -> None:
        """Push `term` as far as it goes (a few calendar years at most), then hold it there."""
        while True:
            value = solver.model().eval(term, model_completion=True)
            solver.push()
            solver.add(term < value if smaller else term > value)
            if run.check(solver) != z3.sat:
                solver.pop()
                solver.add(term == value)
                run.check(solver)
                return

    def _plan(self, model: z3.ModelRef) -> RoutePlan:
        key = tuple(model.eval(objective, model_completion=True).as_long() for objective in self.objectives())
        route = [self.legs[0].maneuver.origin, *(leg.maneuver.destination for leg in self.legs)]
        return RoutePlan(key, self._mission(model), route)

    def _mission(self, model: z3.ModelRef) -> dict[str, Any]:
        def value(expr: z3.ArithRef) -> int:
            number: int = model.eval(expr, model_completion=True).as_long()
            return number

        ions = value(self.ions)
        stages = [self._stage(j, value, ions, model) for j in range(len(self.legs))]
        _mark_ion_detach(
            stages, [z3.is_true(model.eval(on, model_completion=True)) for on in self.attached], ions
        )
        components: dict[str, int] = {}
        for stage in stages:
            for name, count in stage["components"].items():
                if name != "ion":
                    components[name] = components.get(name, 0) + count
        if ions:
            components["ion"] = ions
        mission: dict[str, Any] = {}
        if self.year:
            mission["start"] = stages[0]["year"]
            mission["end"] = stages[-1]["year"] + stages[-1].get("time", 0)
        mission.update(
            components=components,
            payload=self.request.payload,
            mass=value(self.totals["mass"]),
            cost=value(self.totals["cost"]),
            time=value(self.totals["time"]),
            plan=stages,
        )
        return mission

    def _stage(self, j: int, value: Any, ions: int, model: z3.ModelRef) -> dict[str, Any]:
        leg = self.legs[j]
        way = leg.ways[value(self.way[j])]
        time = value(self.time[j])
        components = {
            name: value(self.counts[j][name]) for name in self.rockets if value(self.counts[j][name])
        }
        attached = z3.is_true(model.eval(self.attached[j], model_completion=True))
        if ions and attached and time > 0:
            components["ion"] = ions
        stage: dict[str, Any] = {
            "origin": LOCATIONS[leg.maneuver.origin].name,
            "destination": LOCATIONS[leg.maneuver.destination].name,
            "difficulty": way.difficulty,
            "components": components,
            "aerobraking": way.aerobraking,
            "thrust": sum(ROCKETS[n].thrust * c for n, c in components.items() if n != "ion")
            + ION_THRUST_PER_YEAR * components.get("ion", 0) * time,
            "slingshot": leg.maneuver.slingshot is not None,
        }
        if time:
            stage["time"] = time
        if self.year:
            stage["year"] = value(self.year[j])
        if way.faster:
            stage["faster"] = way.faster
        return stage


def _mark_ion_detach(stages: list[dict[str, Any]], attached: list[bool], ions: int) -> None:
    """`les`' note on the maneuver before which the ion thrusters are left behind."""
    if not ions:
        return
    for stage, on in zip(stages, attached, strict=True):
        if not on:
            stage["rendezvous"] = [{"detach": ["ion", ions]}]
            return


def _lexicographically_less(values: Sequence[z3.ArithRef], bound: Sequence[int]) -> z3.BoolRef:
    """values <lex bound, built from the last component backwards."""
    less = values[-1] < bound[-1]
    for value, limit in zip(reversed(values[:-1]), reversed(bound[:-1]), strict=True):
        less = z3.Or(value < limit, z3.And(value == limit, less))
    return less
