"""A planning request: what the `les` command line and the job params both say, in one checked shape."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from puzzles.leaving_earth.data import DEFAULT_COMPONENT_MAX, FIRST_YEAR, LAST_YEAR, LOCATIONS, ROCKETS
from puzzles.leaving_earth.routes import LAUNCHES

OBJECTIVES = ("cost", "time", "mass")
#: what `les --minimize X` means: X first, then the others in this order
LES_ORDER = {
    "cost": ("cost", "time", "mass"),
    "time": ("time", "cost", "mass"),
    "mass": ("mass", "cost", "time"),
}
COMPONENT_TYPES = (*ROCKETS, "ion")
#: the upper end of an open range such as "3+" (as in `les`)
OPEN_MAX = 900
#: no number in a range may be larger (an upper end above 10 * OPEN_MAX is read as 10 * OPEN_MAX)
MAX_NUMBER = 1_000_000
RANGE_HELP = "a number as 4 (exactly 4), -4 (at most 4), 4+ (at least 4) or 2-4 (between 2 and 4)"

# [0-9], not \d: \d (and int()) also read other scripts' digits, e.g. '٣' as 3
_DIGITS = "([0-9]{1,20})"
_RANGE_FORMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[int, int]]], ...] = (
    (re.compile(_DIGITS), lambda m: (int(m[1]), int(m[1]))),
    (re.compile(f"-{_DIGITS}"), lambda m: (0, int(m[1]))),
    (re.compile(rf"{_DIGITS}\+"), lambda m: (int(m[1]), OPEN_MAX)),
    (re.compile(f"{_DIGITS}-{_DIGITS}"), lambda m: (int(m[1]), int(m[2]))),
)


class RequestError(ValueError):
    """The request cannot be planned as asked (unknown code, bad range...)."""


def parse_range(value: Any) -> tuple[int, int]:
    """`les`' RANGE syntax ("1", "-3", "1+", "1-3", multi-digit too, in ASCII digits), an int, [lo, hi] or
    {min, max}. Outside the text form a number is an int (as JSON writes it: "5", 5.0 and 1.5 are refused),
    and every number is at most MAX_NUMBER."""
    if isinstance(value, Mapping):
        return _checked(_whole(value.get("min", 0)), _whole(value.get("max", OPEN_MAX)))
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        return _checked(_whole(value[0]), _whole(value[1]))
    if not isinstance(value, str):
        number = _whole(value)
        return _checked(number, number)
    text = value.strip()
    for pattern, convert in _RANGE_FORMS:
        match = pattern.fullmatch(text)
        if match:
            return _checked(*convert(match))
    raise RequestError(f"{value!r} is not {RANGE_HELP}")


def _whole(value: Any) -> int:
    """A whole number from a range's JSON: an int (a string or a float is not one)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestError(f"expected {RANGE_HELP}")
    return value


def _checked(low: int, high: int) -> tuple[int, int]:
    if max(abs(low), abs(high)) > MAX_NUMBER:
        raise RequestError(f"bad range: numbers must be at most {MAX_NUMBER}")
    if low < 0 or high < low:
        raise RequestError(f"bad range {low}-{high}: need 0 <= min <= max")
    return low, min(high, 10 * OPEN_MAX)


def objective_order(minimize: str | Sequence[str]) -> tuple[str, ...]:
    """ "time" → les' order for time; ["time", "mass"] → time, mass, then the rest (cost)."""
    names = [minimize] if isinstance(minimize, str) else list(minimize)
    names = [name for part in names for name in str(part).split(",") if name]
    unknown = [name for name in names if name not in OBJECTIVES]
    if unknown or not names or len(set(names)) != len(names):
        raise RequestError(f"minimize: give distinct names among {', '.join(OBJECTIVES)}")
    if len(names) == 1:
        return LES_ORDER[names[0]]
    return (*names, *(name for name in OBJECTIVES if name not in names))


@dataclass(frozen=True)
class Waypoint:
    code: str
    #: payload mass left at the waypoint, and mass taken on there (samples, crew...)
    drop: int = 0
    pick_up: int = 0


@dataclass(frozen=True)
class Request:
    origin: str
    destination: str
    payload: int = 1
    components: dict[str, tuple[int, int]] = field(default_factory=dict)
    cost: tuple[int, int] | None = None
    time: tuple[int, int] = (0, LAST_YEAR - FIRST_YEAR)
    year: int | None = None
    free_ions: int = 0
    objectives: tuple[str, ...] = LES_ORDER["cost"]
    rendezvous: bool = True
    aerobraking: bool = False
    faster: bool = False
    launch: str = "any"
    waypoints: tuple[Waypoint, ...] = ()

    @property
    def stops(self) -> list[str]:
        return [self.origin, *(w.code for w in self.waypoints), self.destination]

    def allowed(self, component: str) -> tuple[int, int]:
        return self.components.get(component, (0, DEFAULT_COMPONENT_MAX))

    def payloads_after_stops(self) -> list[int]:
        """The payload on each leg (a leg ends at a waypoint or at the destination)."""
        payloads, payload = [self.payload], self.payload
        for waypoint in self.waypoints:
            payload = payload - waypoint.drop + waypoint.pick_up
            payloads.append(payload)
        return payloads


def build_request(params: Mapping[str, Any]) -> Request:
    """The request from job params (the schema has checked types; this checks meaning)."""
    origin, destination = params["origin"], params["destination"]
    waypoints = tuple(
        Waypoint(w["location"], int(w.get("drop", 0)), int(w.get("pick_up", 0)))
        for w in params.get("waypoints", ())
    )
    for code in (origin, destination, *(w.code for w in waypoints)):
        if code not in LOCATIONS:
            raise RequestError(f"unknown location {code!r}; known: {', '.join(LOCATIONS)}")
    stops = [origin, *(w.code for w in waypoints), destination]
    if any(a == b for a, b in zip(stops, stops[1:], strict=False)):
        raise RequestError("Origin and destination may not be the same.")
    year = params.get("year")
    request = Request(
        origin=origin,
        destination=destination,
        payload=int(params.get("payload", 1)),
        components={name: parse_range(value) for name, value in (params.get("components") or {}).items()},
        cost=parse_range(params["cost"]) if params.get("cost") is not None else None,
        time=_time_range(params.get("time"), year),
        year=year,
        free_ions=int(params.get("free_ions", 0)),
        objectives=objective_order(params.get("minimize", "cost")),
        rendezvous=bool(params.get("rendezvous", True)),
        aerobraking=bool(params.get("aerobraking", False)),
        faster=bool(params.get("faster", False)),
        launch=params.get("launch", "any"),
        waypoints=waypoints,
    )
    _check(request)
    return request


def _time_range(value: Any, year: int | None) -> tuple[int, int]:
    low, high = parse_range(value) if value is not None else (0, LAST_YEAR - FIRST_YEAR)
    if year is not None:  # the journey has to end by the last year of the game
        low, high = min(low, LAST_YEAR - year), min(high, LAST_YEAR - year)
    return low, high


def _check(request: Request) -> None:
    unknown = set(request.components) - set(COMPONENT_TYPES)
    if unknown:
        raise RequestError(f"unknown component {sorted(unknown)[0]!r}; known: {', '.join(COMPONENT_TYPES)}")
    if request.launch not in LAUNCHES:
        raise RequestError(f"launch must be one of {', '.join(LAUNCHES)}")
    if request.year is not None and not FIRST_YEAR <= request.year <= LAST_YEAR:
        raise RequestError(f"year must be between {FIRST_YEAR} and {LAST_YEAR}")
    if request.payload < 1:
        raise RequestError("payload must be at least 1")
    for index, payload in enumerate(request.payloads_after_stops()[1:]):
        if payload < 0:
            raise RequestError(f"waypoint {index + 1} drops more than the spacecraft carries")
