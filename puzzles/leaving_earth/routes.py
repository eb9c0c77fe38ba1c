"""Routes over the maneuver graph, and the ways (plain, aerobraking, faster) to fly each maneuver.

A route is a list of legs: from the origin to each waypoint in turn, then to the destination. Every leg is
a simple path (no location twice); a route may pass a location again on a later leg (Earth → Moon → Earth).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache

from puzzles.leaving_earth.data import MANEUVERS, Maneuver

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
