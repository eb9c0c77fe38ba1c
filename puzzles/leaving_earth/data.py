"""Leaving Earth facts: locations (with `les` codes and names), maneuvers, rockets and slingshot windows.

Base game with the Mercury, Outer Planets and Stations (cyclers) expansions, as the `les` planner knows them.
Where published sources disagree, the value `les` uses is kept so that plans compare (see DISAGREEMENTS).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Location:
    code: str
    name: str
    expansion: str
    #: planet_surface, surface, suborbital, orbit, flyby, transfer or cycler
    type: str


@dataclass(frozen=True)
class Profile:
    """A way to fly a maneuver: difficulty and minimum years (None: takes no time, cannot be lengthened)."""

    difficulty: int
    years: int | None


@dataclass(frozen=True)
class Maneuver:
    origin: str
    destination: str
    difficulty: int
    #: None: takes no time; 0: optional years may be added; n: at least n years (may be lengthened)
    years: int | None
    expansion: str
    #: the profile with the Aerobraking advancement, where the maneuver has one
    aerobraking: Profile | None = None
    #: a slingshot window name: the maneuver starts only in that planet's window years
    slingshot: str | None = None
    #: done at the end of the turn without rockets (suborbital flight falls back to Earth)
    automatic: bool = False


@dataclass(frozen=True)
class Rocket:
    name: str
    mass: int
    cost: int
    thrust: int


#: in `les`' order (its list of codes prints in this order)
LOCATIONS: dict[str, Location] = {
    "E": Location("E", "Earth", "base", "planet_surface"),
    "Eso": Location("Eso", "Suborbital flight", "base", "suborbital"),
    "Eo": Location("Eo", "Earth orbit", "base", "orbit"),
    "Lo": Location("Lo", "Lunar orbit", "base", "orbit"),
    "Lfb": Location("Lfb", "Lunar fly-by", "base", "flyby"),
    "L": Location("L", "Moon", "base", "surface"),
    "ipt": Location("ipt", "Inner planets transfer", "base", "transfer"),
    "Vfb": Location("Vfb", "Venus fly-by", "base", "flyby"),
    "Vo": Location("Vo", "Venus orbit", "base", "orbit"),
    "V": Location("V", "Venus", "base", "surface"),
    "C": Location("C", "Ceres", "base", "surface"),
    "Mfb": Location("Mfb", "Mars fly-by", "base", "flyby"),
    "Mo": Location("Mo", "Mars orbit", "base", "orbit"),
    "M": Location("M", "Mars", "base", "surface"),
    "P": Location("P", "Phobos", "base", "surface"),
    "Hfb": Location("Hfb", "Mercury fly-by", "mercury", "flyby"),
    "Ho": Location("Ho", "Mercury orbit", "mercury", "orbit"),
    "H": Location("H", "Mercury", "mercury", "surface"),
    "Ec": Location("Ec", "Earth cycler", "stations", "cycler"),
    "Mc": Location("Mc", "Mars cycler", "stations", "cycler"),
    "opt": Location("opt", "Outer planets transfer", "outer_planets", "transfer"),
    "Jo": Location("Jo", "Jupiter orbit", "outer_planets", "orbit"),
    "Jfb": Location("Jfb", "Jupiter fly-by", "outer_planets", "flyby"),
    "G": Location("G", "Ganymede", "outer_planets", "surface"),
    "Go": Location("Go", "Ganymede orbit", "outer_planets", "orbit"),
    "I": Location("I", "Io", "outer_planets", "surface"),
    "W": Location("W", "Europa", "outer_planets", "surface"),
    "K": Location("K", "Callisto", "outer_planets", "surface"),
    "So": Location("So", "Saturn orbit", "outer_planets", "orbit"),
    "Sfb": Location("Sfb", "Saturn fly-by", "outer_planets", "flyby"),
    "T": Location("T", "Titan", "outer_planets", "surface"),
    "To": Location("To", "Titan orbit", "outer_planets", "orbit"),
    "D": Location("D", "Enceladus", "outer_planets", "surface"),
    "Ufb": Location("Ufb", "Uranus fly-by", "outer_planets", "flyby"),
    "Nfb": Location("Nfb", "Neptune fly-by", "outer_planets", "flyby"),
}

# fmt: off
MANEUVERS: tuple[Maneuver, ...] = (
    Maneuver('E', 'Eo', 8, None, 'base'),
    Maneuver('E', 'Eso', 3, None, 'base'),
    Maneuver('Eso', 'E', 0, None, 'base', automatic=True),
    Maneuver('Eso', 'Eo', 5, None, 'base'),
    Maneuver('Eo', 'E', 0, None, 'base'),
    Maneuver('Eo', 'Ec', 3, 0, 'stations'),
    Maneuver('Eo', 'Lfb', 1, 0, 'base'),
    Maneuver('Eo', 'Lo', 3, 0, 'base'),
    Maneuver('Eo', 'Mfb', 3, 3, 'base'),
    Maneuver('Eo', 'Mo', 5, 3, 'base'),
    Maneuver('Eo', 'ipt', 3, 1, 'base'),
    Maneuver('Eo', 'opt', 6, 1, 'outer_planets'),
    Maneuver('Lo', 'Eo', 3, 0, 'base'),
    Maneuver('Lo', 'L', 2, None, 'base'),
    Maneuver('Lfb', 'Eo', 1, 0, 'base'),
    Maneuver('Lfb', 'L', 4, None, 'base'),
    Maneuver('Lfb', 'Lo', 2, 0, 'base'),
    Maneuver('L', 'Lo', 2, None, 'base'),
    Maneuver('ipt', 'C', 5, 1, 'base'),
    Maneuver('ipt', 'Eo', 3, 1, 'base'),
    Maneuver('ipt', 'Hfb', 5, 1, 'mercury'),
    Maneuver('ipt', 'Mfb', 1, 2, 'base'),
    Maneuver('ipt', 'Mo', 4, 2, 'base'),
    Maneuver('ipt', 'Vfb', 2, 1, 'base'),
    Maneuver('ipt', 'Vo', 3, 1, 'base'),
    Maneuver('Vfb', 'V', 1, None, 'base'),
    Maneuver('Vfb', 'Vo', 1, 0, 'base', aerobraking=Profile(0, None)),
    Maneuver('Vfb', 'ipt', 1, 3, 'base'),
    Maneuver('Vfb', 'Jfb', 1, 1, 'outer_planets', slingshot='jupiter'),
    Maneuver('Vo', 'V', 0, None, 'base'),
    Maneuver('Vo', 'ipt', 3, 1, 'base'),
    Maneuver('Vo', 'opt', 9, 1, 'outer_planets'),
    Maneuver('V', 'Vo', 6, None, 'base'),
    Maneuver('C', 'ipt', 5, 2, 'base'),
    Maneuver('C', 'opt', 3, 1, 'outer_planets'),
    Maneuver('Mfb', 'M', 3, None, 'base'),
    Maneuver('Mfb', 'Mo', 3, 0, 'base', aerobraking=Profile(1, None)),
    Maneuver('Mfb', 'ipt', 1, 2, 'base'),
    Maneuver('Mfb', 'Jfb', 4, 3, 'outer_planets', slingshot='jupiter'),
    Maneuver('Mo', 'Eo', 5, 3, 'base'),
    Maneuver('Mo', 'M', 0, None, 'base'),
    Maneuver('Mo', 'Mc', 3, 0, 'stations'),
    Maneuver('Mo', 'P', 1, 0, 'base'),
    Maneuver('Mo', 'ipt', 4, 2, 'base'),
    Maneuver('Mo', 'opt', 5, 1, 'outer_planets'),
    Maneuver('M', 'Mo', 3, None, 'base'),
    Maneuver('P', 'Mo', 1, 0, 'base'),
    Maneuver('Hfb', 'H', 4, None, 'mercury'),
    Maneuver('Hfb', 'Ho', 2, 0, 'mercury'),
    Maneuver('Ho', 'H', 2, None, 'mercury'),
    Maneuver('Ho', 'ipt', 7, 1, 'mercury'),
    Maneuver('H', 'Ho', 2, None, 'mercury'),
    Maneuver('Ec', 'Eo', 3, 0, 'stations', aerobraking=Profile(0, None)),
    Maneuver('Ec', 'Mc', 0, 3, 'stations'),
    Maneuver('Mc', 'Ec', 0, 3, 'stations'),
    Maneuver('Mc', 'M', 3, None, 'stations'),
    Maneuver('Mc', 'Mo', 3, 0, 'stations', aerobraking=Profile(0, None)),
    Maneuver('opt', 'C', 3, 1, 'outer_planets'),
    Maneuver('opt', 'Mo', 5, 1, 'outer_planets', aerobraking=Profile(2, 1)),
    Maneuver('opt', 'Jfb', 4, 2, 'outer_planets', slingshot='jupiter'),
    Maneuver('opt', 'Sfb', 3, 3, 'outer_planets', slingshot='saturn'),
    Maneuver('opt', 'Ufb', 4, 9, 'outer_planets', slingshot='uranus'),
    Maneuver('opt', 'Eo', 6, 1, 'outer_planets', aerobraking=Profile(1, 1)),
    Maneuver('Jo', 'Jfb', 10, 0, 'outer_planets'),
    Maneuver('Jo', 'I', 2, 0, 'outer_planets'),
    Maneuver('Jo', 'Go', 3, 0, 'outer_planets'),
    Maneuver('Jo', 'W', 2, 0, 'outer_planets'),
    Maneuver('Jo', 'K', 5, 0, 'outer_planets'),
    Maneuver('Jfb', 'Jo', 10, 0, 'outer_planets', aerobraking=Profile(3, None)),
    Maneuver('Jfb', 'Sfb', 0, 2, 'outer_planets', slingshot='saturn'),
    Maneuver('Jfb', 'opt', 4, 2, 'outer_planets'),
    Maneuver('G', 'Go', 2, None, 'outer_planets'),
    Maneuver('Go', 'G', 2, None, 'outer_planets'),
    Maneuver('Go', 'Jo', 2, 0, 'outer_planets'),
    Maneuver('I', 'Jo', 2, 0, 'outer_planets'),
    Maneuver('W', 'Jo', 2, 0, 'outer_planets'),
    Maneuver('K', 'Jo', 5, 0, 'outer_planets'),
    Maneuver('K', 'Jfb', 5, None, 'outer_planets'),
    Maneuver('So', 'Sfb', 7, 0, 'outer_planets'),
    Maneuver('So', 'To', 2, 0, 'outer_planets', aerobraking=Profile(1, None)),
    Maneuver('So', 'T', 1, None, 'outer_planets'),
    Maneuver('So', 'D', 2, 0, 'outer_planets'),
    Maneuver('Sfb', 'Ufb', 0, 5, 'outer_planets', slingshot='uranus'),
    Maneuver('Sfb', 'So', 7, 0, 'outer_planets', aerobraking=Profile(1, None)),
    Maneuver('Sfb', 'opt', 3, 3, 'outer_planets'),
    Maneuver('T', 'To', 2, None, 'outer_planets'),
    Maneuver('To', 'So', 2, 0, 'outer_planets'),
    Maneuver('To', 'T', 0, None, 'outer_planets'),
    Maneuver('D', 'So', 2, 0, 'outer_planets'),
    Maneuver('Ufb', 'Nfb', 0, 4, 'outer_planets', slingshot='neptune'),
    Maneuver('Ufb', 'opt', 4, 9, 'outer_planets'),
)
# fmt: on

#: expendable rockets: each fires once, on one maneuver
ROCKETS: dict[str, Rocket] = {
    "juno": Rocket("juno", mass=1, cost=1, thrust=4),
    "atlas": Rocket("atlas", mass=4, cost=5, thrust=27),
    "soyuz": Rocket("soyuz", mass=9, cost=8, thrust=80),
    "proton": Rocket("proton", mass=6, cost=12, thrust=70),
    "saturn": Rocket("saturn", mass=20, cost=15, thrust=200),
}

#: ion thrusters are not expended: each gives ION_THRUST_PER_YEAR thrust per year a maneuver takes
ION_MASS = 1
ION_COST = 10
ION_THRUST_PER_YEAR = 5

#: a slingshot maneuver may only start in the years first + k * every
SLINGSHOT_WINDOWS: dict[str, tuple[int, int]] = {
    "jupiter": (1956, 2),
    "saturn": (1957, 3),
    "uranus": (1957, 5),
    "neptune": (1958, 6),
}

#: the calendar with the Outer Planets expansion (the base game ends in 1976)
FIRST_YEAR, LAST_YEAR = 1956, 1986

#: `les`' default range for every rocket type and for ion thrusters
DEFAULT_COMPONENT_MAX = 8

#: where the sources disagree on planning facts (the values above follow `les`)
DISAGREEMENTS: tuple[str, ...] = (
    "Go->Jo difficulty: les 2; thrilliams and marcos-panontin 3",
    "ipt->Mfb (1, 2y), Mfb->ipt (1, 2y) and Vfb->ipt (1, 3y) exist only in les",
    "ipt->Mo: thrilliams has no duration; les, marcos-panontin and the planning tool CSV: 2 years",
    "Ufb->opt: thrilliams difficulty 9 and no duration; les and marcos-panontin: difficulty 4, 9 years",
    "Sfb->Ufb: thrilliams has no uranus slingshot window; les and marcos-panontin have one",
    "cyclers (Ec, Mc and their maneuvers): in les and marcos-panontin, absent from thrilliams",
    "Saturn rocket cost: 15 (les, thrilliams, bartoleo) vs 20 (marcos-panontin components.js)",
)
