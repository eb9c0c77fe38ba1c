"""The Search for Planet X: modes, objects and the compact board encoding.

A board is one object per sector. Encoded as 3 bits per sector (E=0, X=1, G=2, D=3, A=4, C=5) with
sector 1 in the lowest bits, so an expert board (18 sectors, 54 bits) fits a PostgreSQL BIGINT; the human
form is a letter string such as "ACCDAADDAEGX".
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

import numpy as np

EMPTY, PLANET_X, GAS_CLOUD, DWARF_PLANET, ASTEROID, COMET = range(6)
LETTERS = "EXGDAC"
OBJECT_NAMES = ("empty", "planet_x", "gas_cloud", "dwarf_planet", "asteroid", "comet")
OBJECTS = dict(zip(OBJECT_NAMES, range(6), strict=True))
BITS = 3
#: what a host offers through `run.resource(BOARDS_RESOURCE, mode=...)`: the stored boards of a mode
BOARDS_RESOURCE = "planetx.boards"


@dataclass(frozen=True, eq=False)
class Mode:
    name: str
    sectors: int
    #: how many of each object, indexed like LETTERS
    counts: tuple[int, int, int, int, int, int]
    #: expert: all dwarf planets lie in a band of exactly this many consecutive sectors (0 = no rule)
    dwarf_band: int
    visible: int

    @cached_property
    def primes(self) -> frozenset[int]:
        return frozenset(s for s in range(2, self.sectors + 1) if all(s % d for d in range(2, s)))

    def neighbours(self, sector: int) -> tuple[int, int]:
        """1-based sectors on either side (the board is a circle)."""
        return (sector - 2) % self.sectors + 1, sector % self.sectors + 1


MODES = {
    "standard": Mode("standard", 12, (2, 1, 2, 1, 4, 2), dwarf_band=0, visible=6),
    "expert": Mode("expert", 18, (5, 1, 2, 4, 4, 2), dwarf_band=6, visible=9),
}


def encode(objects: list[int] | tuple[int, ...]) -> int:
    code = 0
    for index, obj in enumerate(objects):
        code |= obj << (BITS * index)
    return code


def decode(code: int, sectors: int) -> list[int]:
    return [(code >> (BITS * index)) & 7 for index in range(sectors)]


#: the letters of three sectors, by their 9 bits (None where a sector's 3 bits name no object)
_TRIPLES: list[str | None] = [
    "".join(LETTERS[(bits >> (BITS * k)) & 7] for k in range(3))
    if all((bits >> (BITS * k)) & 7 < len(LETTERS) for k in range(3))
    else None
    for bits in range(1 << (3 * BITS))
]


#: the letters of four sectors as the 4 ASCII bytes of one uint32, by their 12 bits ("?" where a sector's
#: 3 bits name no object)
_QUAD_LETTERS = (
    np.array(
        [[(LETTERS + "??")[(bits >> (BITS * k)) & 7] for k in range(4)] for bits in range(1 << (4 * BITS))],
        dtype="S1",
    )
    .view(np.uint32)
    .ravel()
)


def letters_matrix(codes: np.ndarray, sectors: int) -> np.ndarray:
    """Many boards' letters at once: row i holds board codes[i]'s letters as ASCII bytes (the letters
    to_letters gives; "?" in a sector whose bits name no object). An export renders a million: four
    sectors per gather."""
    groups = -(-sectors // 4)
    letters = np.empty((len(codes), groups), dtype=np.uint32)
    rest = codes.astype(np.int64)
    for group in range(groups):
        letters[:, group] = _QUAD_LETTERS[rest & 0xFFF]
        rest = rest >> (4 * BITS)
    return letters.view(np.uint8)[:, :sectors]


def to_letters(code: int, sectors: int) -> str:
    """Three sectors per table look-up (an export renders a million boards)."""
    code &= (1 << (BITS * sectors)) - 1
    triples = cast("list[str]", _TRIPLES)  # a board names an object in every sector (a None fails the join)
    letters = "".join([triples[(code >> shift) & 0o777] for shift in range(0, BITS * sectors, 3 * BITS)])
    return letters[:sectors]


def from_letters(letters: str) -> int:
    return encode([LETTERS.index(letter) for letter in letters.upper()])


def render_board(params: dict[str, Any], code: int) -> str:
    """The letters of a stored board of a job with these params."""
    return to_letters(code, MODES[params["mode"]].sectors)
