"""The starting facts a game deals by difficulty: "sector k is not a T", T an asteroid, comet, dwarf planet
or gas cloud (the official app's: youth 12, beginner 8, experienced 4, genius 0, in either mode, as
cschubiner/planet-x-searching's note sheet records them).

How the app draws them is not public. The model here: that many distinct sectors, uniform, and for each a
true fact uniform among the objects that could be there on some board of the mode (a comet can only be in
a prime sector, so "sector 4 is not a comet" tells nothing and is never dealt). Each fact is a plain
fact, and also evidence: a sector holding one of the four objects has one fact fewer to be dealt
(`likelihood`).
"""

from __future__ import annotations

from collections.abc import Sequence
from weakref import WeakKeyDictionary

import numpy as np

from puzzles.planetx.board import OBJECTS
from puzzles.planetx.boardset import BoardSet
from puzzles.planetx.clues import Statement

DIFFICULTIES = {"youth": 12, "beginner": 8, "experienced": 4, "genius": 0}
DEFAULT_DIFFICULTY = "genius"
FACT_OBJECTS = ("asteroid", "comet", "dwarf_planet", "gas_cloud")


def fact(sector: int, obj: str) -> Statement:
    """A starting fact as an observation: `sector` (1-based) holds no `obj`."""
    return {"type": "sector", "sector": sector, "object": obj, "present": False}


#: per whole board set (kept as long as it is): sectors × FACT_OBJECTS, could the object be there
_possible_in: WeakKeyDictionary[BoardSet, np.ndarray] = WeakKeyDictionary()


def _possible(everything: BoardSet) -> np.ndarray:
    """sectors × FACT_OBJECTS: could the object be in the sector on some board of the mode? (A pass over
    every board: once per set, not once per game.)"""
    whole = everything.whole
    if whole not in _possible_in:
        codes = np.array([OBJECTS[name] for name in FACT_OBJECTS])
        _possible_in[whole] = (whole.grid[:, :, None] == codes).any(axis=0)
    return _possible_in[whole]


def draw(rng: np.random.Generator, everything: BoardSet, row: int, count: int) -> list[Statement]:
    """`count` starting facts true on the board at `row`."""
    if not count:
        return []
    possible = _possible(everything)
    board = everything.grid[row]
    sectors = np.sort(
        rng.choice(everything.mode.sectors, size=min(count, everything.mode.sectors), replace=False)
    )
    facts = []
    for s in sectors:
        choices = [
            name for k, name in enumerate(FACT_OBJECTS) if possible[s, k] and board[s] != OBJECTS[name]
        ]
        facts.append(fact(int(s) + 1, choices[int(rng.integers(len(choices)))]))
    return facts


def likelihood(boards: BoardSet, facts: Sequence[Statement]) -> np.ndarray:
    """Per board: the chance (up to a factor the same on every board) the game deals these facts: 0 where
    one is false, else one over the facts each named sector had to choose from."""
    possible = _possible(boards)
    codes = np.array([OBJECTS[name] for name in FACT_OBJECTS])
    chance = np.ones(len(boards))
    for f in facts:
        s = f["sector"] - 1
        column = boards.grid[:, s]
        holds = column != OBJECTS[f["object"]]
        choices = possible[s].sum() - (possible[s] & (column[:, None] == codes)).any(axis=1)
        chance *= holds / np.maximum(choices, 1)
    return chance
