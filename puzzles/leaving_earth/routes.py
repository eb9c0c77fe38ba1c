"""Routes over the maneuver graph, the ways to fly each maneuver, and cheap lower bounds used to prune routes.

A route is a list of legs: from the origin to each waypoint in turn, then to the destination. Every leg is
a simple path (no location twice); a route may pass a location again on a later leg (Earth → Moon → Earth).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from puzzles.leaving_earth.data import MANEUVERS, ROCKETS, Maneuver, Rocket

LAUNCHES = ("any", "two-stage", "single-stage")


@dataclass(frozen=True)
class Way:
    """One way to fly a maneuver: plain, aerobraking, or `faster` halvings of its years."""

    difficulty: int
    #: None: takes no time; otherwise the minimum years (the maneuver may take longer...)
    years: int | None
    #: ...unless it is a slingshot: exactly `years`, starting in a window year
    fixed: bool = False
    aerobraking: bool = False
    #: how many times the years were halved (each at double difficulty)
    faster: int = 0


@dataclass(frozen=True)
class Leg:
    """A maneuver as flown on a route, with the payload carried during it."""

    maneuver: Maneuver
    ways: tuple[Way, ...]
    payload: int


def ways_to_fly(maneuver: Maneuver, aerobraking: bool, faster: bool) -> tuple[Way, ...]:
    fixed = maneuver.slingshot is not None
    ways = [Way(maneuver.difficulty, maneuver.years, fixed=fixed)]
    if aerobraking and maneuver.aerobraking is not None:
        ways.append(Way(maneuver.aerobraking.difficulty, maneuver.aerobraking.years, aerobraking=True))
    if faster and not fixed:
        for way in list(ways):
            years, difficulty, level = way.years, way.difficulty, 0
            while years is not None and years > 1:
                years, difficulty, level = math.ceil(years / 2), difficulty * 2, level + 1
                ways.append(Way(difficulty, years, aerobraking=way.aerobraking, faster=level))
    return tuple(ways)


@cache
def _outgoing(launch: str) -> dict[str, tuple[Maneuver, ...]]:
    banned = {"two-stage": ("E", "Eo"), "single-stage": ("E", "Eso")}.get(launch)
    graph: dict[str, list[Maneuver]] = {}
    for maneuver in MANEUVERS:
        if (maneuver.origin, maneuver.destination) != banned:
            graph.setdefault(maneuver.origin, []).append(maneuver)
    return {origin: tuple(moves) for origin, moves in graph.items()}


@cache
def simple_paths(origin: str, destination: str, launch: str = "any") -> tuple[tuple[Maneuver, ...], ...]:
    """Every path from origin to destination that visits no location twice."""
    graph = _outgoing(launch)
    found: list[tuple[Maneuver, ...]] = []

    def walk(here: str, visited: frozenset[str], path: tuple[Maneuver, ...]) -> None:
        if here == destination and path:
            found.append(path)
            return
        for maneuver in graph.get(here, ()):
            if maneuver.destination not in visited:
                walk(maneuver.destination, visited | {maneuver.destination}, path + (maneuver,))

    walk(origin, frozenset([origin]), ())
    return tuple(found)


def routes(
    stops: Sequence[str], launch: str = "any", limit: int = 200_000
) -> Iterator[tuple[tuple[Maneuver, ...], ...]]:
    """Every route through `stops` in order, as one simple path per leg; at most `limit` routes."""
    legs = [simple_paths(a, b, launch) for a, b in itertools.pairwise(stops)]
    yield from itertools.islice(itertools.product(*legs), limit)


# ---------------------------------------------------------------------------------------------------------
# Lower bounds. Relax integrality: n rockets of one type lift load L on difficulty d when
# n (thrust - d mass) >= d L, so the cheapest continuous choice costs L d c / (thrust - d mass) and the load
# of the maneuvers before grows by the rockets' mass. With the best cost of the earlier maneuvers affine in
# their load (a L + b), each maneuver keeps the form, so one pass from the first maneuver gives the exact
# continuous optimum: a valid lower bound for the integer plan.


def _stage_factor(rocket: Rocket, difficulty: int) -> float | None:
    """Rockets of this type needed per unit of load, or None if they cannot lift even themselves."""
    spare = rocket.thrust - difficulty * rocket.mass
    return difficulty / spare if spare > 0 else None


def relaxed_minimum(
    difficulties: Sequence[int], payloads: Sequence[int], rockets: Sequence[Rocket], measure: str
) -> float:
    """Least total rocket cost (or mass) over maneuvers in flight order, rockets counted continuously."""
    slope, offset = 0.0, 0.0  # best value of maneuvers 1..j as slope * load_j + offset
    for index, difficulty in enumerate(difficulties):
        if index:
            offset += slope * (payloads[index - 1] - payloads[index])
        if difficulty <= 0:
            continue
        best = math.inf
        for rocket in rockets:
            factor = _stage_factor(rocket, difficulty)
            if factor is not None:
                price = rocket.cost if measure == "cost" else rocket.mass
                best = min(best, factor * price + slope * (1 + factor * rocket.mass))
        if best == math.inf:
            return math.inf
        slope = best
    return slope * payloads[-1] + offset


@dataclass(frozen=True)
class Limits:
    """What the bounds need to know of a request."""

    rockets: tuple[str, ...]  # the expendable types allowed (max > 0)
    ion_min: int
    ion_max: int
    free_ions: int
    ion_cost: int
    ion_mass: int


def lower_bounds(legs: Sequence[Leg], limits: Limits) -> dict[str, float]:
    """Lower bounds of cost, mass and time for any plan of this route."""
    rockets = [ROCKETS[name] for name in limits.rockets]
    easiest = [min(way.difficulty for way in leg.ways) for leg in legs]
    payloads = [leg.payload for leg in legs]
    time = sum(min(way.years or 0 for way in leg.ways) for leg in legs)
    forced_ions = max(limits.ion_min, 0)
    bounds = {
        measure: relaxed_minimum(easiest, payloads, rockets, measure) + _ion_price(forced_ions, limits, measure)
        for measure in ("cost", "mass")
    }
    if limits.ion_max >= 1:
        # ions may do the work of every maneuver that can take time; they cost at least one thruster
        unpowered = [0 if _ion_usable(leg) else d for leg, d in zip(legs, easiest, strict=True)]
        some_ions = max(forced_ions, 1)
        for measure in bounds:
            with_ions = relaxed_minimum(unpowered, payloads, rockets, measure)
            bounds[measure] = min(bounds[measure], with_ions + _ion_price(some_ions, limits, measure))
    bounds["time"] = float(time)
    return bounds


def _ion_usable(leg: Leg) -> bool:
    return any(way.years is not None for way in leg.ways)


def _ion_price(count: int, limits: Limits, measure: str) -> float:
    if measure == "cost":
        return max(0, count - limits.free_ions) * limits.ion_cost
    return count * limits.ion_mass
