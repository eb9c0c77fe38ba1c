"""The best objective key a route could reach, by dynamic programming over whole rockets.

The same problem as the Z3 model, relaxed in three ways: no lower bounds on rocket totals or time, rocket
upper bounds only per maneuver (not summed over the route), and no calendar. So the key found here is a
lower bound of the route's Z3 optimum, usually equal to it. The planner orders and prunes routes with it,
and then asks Z3 for a plan at exactly this key: when Z3 finds one, it is optimal.

The pass runs backwards from the last maneuver. A state is (load, years, ions attached?) with its cost in
rockets: load is what the maneuver has to lift besides its own rockets and ions (payload plus the rockets of
the later maneuvers). A state that is no better in any of the four is dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from puzzles.leaving_earth.data import ION_COST, ION_MASS, ION_THRUST_PER_YEAR, ROCKETS
from puzzles.leaving_earth.routes import Leg, Way

State = tuple[int, int, bool, int]  # load, years, ions attached on the later maneuvers, rocket cost


@dataclass(frozen=True)
class Relaxation:
    rockets: tuple[tuple[str, int], ...]  # allowed types with their per-maneuver cap
    ions: tuple[int, int]
    free_ions: int
    rendezvous: bool
    max_years: int
    max_cost: int | None
    objectives: tuple[str, ...]
    #: every plan costs and takes at least this much (the request's ranges)
    min_cost: int = 0
    min_years: int = 0


@lru_cache(maxsize=65_536)
def rocket_choices(
    difficulty: int, need: int, rockets: tuple[tuple[str, int], ...]
) -> tuple[tuple[int, int], ...]:
    """(mass, cost) of every set of rockets whose spare thrust reaches `need`, none beaten on both."""
    usable = []
    for name, cap in rockets:
        rocket = ROCKETS[name]
        spare = rocket.thrust - difficulty * rocket.mass
        if spare > 0 and cap > 0:
            usable.append((spare, rocket.mass, rocket.cost, cap))
    usable.sort(reverse=True)
    found: list[tuple[int, int]] = []

    def pick(index: int, need: int, mass: int, cost: int) -> None:
        if need <= 0:
            found.append((mass, cost))
            return
        if index == len(usable):
            return
        spare, unit_mass, unit_cost, cap = usable[index]
        most = min(cap, math.ceil(need / spare))
        if index == len(usable) - 1:
            if most * spare >= need:
                found.append((mass + most * unit_mass, cost + most * unit_cost))
            return
        for count in range(most + 1):
            pick(index + 1, need - count * spare, mass + count * unit_mass, cost + count * unit_cost)

    pick(0, need, 0, 0)
    return tuple(_pareto_2d(found))


def _pareto_2d(points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    front, best_cost = [], math.inf
    for mass, cost in sorted(set(points)):
        if cost < best_cost:
            front.append((mass, cost))
            best_cost = cost
    return front


def best_key(
    legs: Sequence[Leg], relaxation: Relaxation, cutoff: tuple[int, ...] | None = None
) -> tuple[int, ...] | None:
    """The lexicographically least objective key over the relaxed plans that is below `cutoff`, or None."""
    best = cutoff
    found = False
    low, high = relaxation.ions
    for ions in range(low, high + 1):
        ion_cost = max(0, ions - relaxation.free_ions) * ION_COST
        if relaxation.max_cost is not None and ion_cost > relaxation.max_cost:
            break
        search = _IonPass(legs, relaxation, ions, ion_cost)
        if best is not None and search.key(0, 0, legs[0].payload) >= best:
            break  # more ions only add cost and mass
        for load, years, _, cost in search.final_states(best):
            key = search.key(cost, years, load)
            if best is None or key < best:
                best, found = key, True
    return best if found else None


class _IonPass:
    """The backward pass for one number of ion thrusters."""

    def __init__(self, legs: Sequence[Leg], relaxation: Relaxation, ions: int, ion_cost: int):
        self.legs, self.relaxation, self.ions, self.ion_cost = legs, relaxation, ions, ion_cost

    def key(self, cost: int, years: int, load: int, payload: int | None = None) -> tuple[int, ...]:
        """The objective key of a plan, or a lower bound of it for a partial plan (rockets so far)."""
        relaxation = self.relaxation
        rockets_mass = load - (self.legs[0].payload if payload is None else payload)
        totals = {
            "cost": max(cost + self.ion_cost, relaxation.min_cost),
            "time": max(years, relaxation.min_years),
            "mass": rockets_mass + self.ions * ION_MASS,
        }
        return tuple(totals[name] for name in relaxation.objectives)

    def final_states(self, cutoff: tuple[int, ...] | None) -> list[State]:
        legs = self.legs
        states: list[State] = [(legs[-1].payload, 0, False, 0)]
        for j in reversed(range(len(legs))):
            drop = legs[j - 1].payload - legs[j].payload if j else 0
            payload_before = legs[j - 1].payload if j else legs[0].payload
            following = []
            for state in states:
                for move in _moves(legs[j], state, self.ions, drop, self.relaxation):
                    if cutoff is None or self.key(move[3], move[1], move[0], payload_before) < cutoff:
                        following.append(move)
            states = _pareto_states(following)
            if not states:
                return []
        return states


def _moves(leg: Leg, state: State, ions: int, drop: int, relaxation: Relaxation) -> list[State]:
    load, years, attached_later, cost = state
    attach_options = [True] if attached_later or not relaxation.rendezvous else [False, True]
    if ions == 0:
        attach_options = [attached_later]
    moves = []
    for attached in attach_options:
        ion_mass = ions * ION_MASS if attached else 0
        for way in leg.ways:
            years_left = relaxation.max_years - years
            for time in _useful_times(way, load + ion_mass, ions if attached else 0, years_left):
                need = way.difficulty * (load + ion_mass) - ION_THRUST_PER_YEAR * ions * time * attached
                choices = ((0, 0),) if need <= 0 else rocket_choices(way.difficulty, need, relaxation.rockets)
                for mass, price in choices:
                    total = cost + price
                    if relaxation.max_cost is None or total <= relaxation.max_cost:
                        moves.append((load + mass + drop, years + time, attached, total))
    return moves


def _useful_times(way: Way, mass: int, ions: int, years_left: int) -> range:
    """Years worth trying: the least, and (with ions) each extra year until ions alone do the work."""
    if way.years is None:
        return range(0, 1)
    least = way.years
    if least > years_left:
        return range(0)
    if way.fixed or ions == 0:
        return range(least, least + 1)
    enough = max(least, math.ceil(way.difficulty * mass / (ION_THRUST_PER_YEAR * ions)))
    return range(least, min(enough, years_left) + 1)


def _pareto_states(states: list[State]) -> list[State]:
    """Drop every state another one matches or beats in load, years, attachment and cost."""
    kept: list[State] = []
    for state in sorted(set(states), key=lambda s: (s[0], s[1], s[2], s[3])):
        if not any(
            other[0] <= state[0] and other[1] <= state[1] and other[2] <= state[2] and other[3] <= state[3]
            for other in kept
        ):
            kept.append(state)
    return kept
