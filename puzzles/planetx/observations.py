"""What a Planet X player learns, as filters over boards.

Every observation can be read three ways, and the tests hold them to agree:
- `mask(grid)`: vectorised over a board matrix (numpy, one row per board): how deductions filter;
- `holds(board)`: one board in plain Python: the brute-force reference;
- `constraint(model)`: a Z3 formula over a `BoardModel`: for Z3 model counting.

The JSON form (see `schemas/planetx.py`) is turned into these classes by `parse`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np
import z3

from puzzles.planetx.board import EMPTY, OBJECTS, PLANET_X, Mode
from puzzles.planetx.solver import BoardModel
from puzzles.runtime import checkpoint

#: what a survey or a target may report: Planet X is seen as empty
SEEN_AS = {"empty": (EMPTY, PLANET_X)}


def seen(name: str) -> tuple[int, ...]:
    """The objects an observed object name stands for (`empty` in a survey or target includes Planet X)."""
    return SEEN_AS.get(name, (OBJECTS[name],))


def arc(mode: Mode, first: int, last: int) -> list[int]:
    """1-based sectors from `first` to `last` inclusive, going around the circle."""
    width = (last - first) % mode.sectors + 1
    return [(first - 1 + k) % mode.sectors + 1 for k in range(width)]


def distance(mode: Mode, a: int, b: int) -> int:
    """Steps between two sectors around the circle."""
    d = abs(a - b) % mode.sectors
    return min(d, mode.sectors - d)


class Observation(Protocol):
    def mask(self, mode: Mode, grid: np.ndarray) -> np.ndarray: ...
    def holds(self, mode: Mode, board: Sequence[int]) -> bool: ...
    def constraint(self, model: BoardModel) -> z3.BoolRef: ...


def any_of(grid: np.ndarray, objects: tuple[int, ...]) -> np.ndarray:
    """Where the grid holds one of `objects` (one or two comparisons beat np.isin several times)."""
    out: np.ndarray = grid == objects[0]
    for obj in objects[1:]:
        out |= grid == obj
    return out


def _rolled_or(matrix: np.ndarray, shifts: list[int]) -> np.ndarray:
    """Per sector: does any sector at one of these offsets hold a True? (circular)"""
    out = np.zeros_like(matrix)
    for shift in shifts:
        out |= np.roll(matrix, shift, axis=1)
    return out


def _offsets_within(mode: Mode, reach: int) -> list[int]:
    """Offsets of the other sectors at most `reach` steps away (a sector is not near itself: "every
    asteroid within 2 of an asteroid" means another one)."""
    return sorted({d % mode.sectors for d in range(-reach, reach + 1)} - {0})


def _z3_near(model: BoardModel, sector: int, obj: int, offsets: list[int]) -> z3.BoolRef:
    n = model.mode.sectors
    return z3.Or([model.at((sector - 1 - d) % n + 1, obj) for d in offsets])


@dataclass(frozen=True)
class SectorIs:
    """`sector` holds (or, with present=False, does not hold) `obj`; Planet X is itself here."""

    sector: int
    obj: int
    present: bool = True

    def mask(self, mode: Mode, grid: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, (grid[:, self.sector - 1] == self.obj) == self.present)

    def holds(self, mode: Mode, board: Sequence[int]) -> bool:
        return (board[self.sector - 1] == self.obj) == self.present

    def constraint(self, model: BoardModel) -> z3.BoolRef:
        at = model.at(self.sector, self.obj)
        return at if self.present else z3.Not(at)


@dataclass(frozen=True)
class Survey:
    """`count` sectors from `first` to `last` hold one of `objects` (a survey of `empty` counts Planet X)."""

    objects: tuple[int, ...]
    first: int
    last: int
    count: int

    def mask(self, mode: Mode, grid: np.ndarray) -> np.ndarray:
        columns = [s - 1 for s in arc(mode, self.first, self.last)]
        return cast(np.ndarray, any_of(grid[:, columns], self.objects).sum(axis=1) == self.count)

    def holds(self, mode: Mode, board: Sequence[int]) -> bool:
        return sum(board[s - 1] in self.objects for s in arc(mode, self.first, self.last)) == self.count

    def constraint(self, model: BoardModel) -> z3.BoolRef:
        terms = [
            (model.at(s, obj), 1) for s in arc(model.mode, self.first, self.last) for obj in self.objects
        ]
        return z3.PbEq(terms, self.count)


@dataclass(frozen=True)
class Target:
    """Targeting `sector` showed `objects` (Planet X shows as empty)."""

    sector: int
    objects: tuple[int, ...]

    def mask(self, mode: Mode, grid: np.ndarray) -> np.ndarray:
        return any_of(grid[:, self.sector - 1], self.objects)

    def holds(self, mode: Mode, board: Sequence[int]) -> bool:
        return board[self.sector - 1] in self.objects

    def constraint(self, model: BoardModel) -> z3.BoolRef:
        return z3.Or([model.at(self.sector, obj) for obj in self.objects])


@dataclass(frozen=True)
class Near:
    """A research or conference clue relating each `subject` to `other` objects at some offsets:
    `quantifier` all (every subject has one), some (at least one subject has one) or none (no subject
    has one). Adjacent is reach 1; opposite is the single offset n/2; "within N sectors" is reach N."""

    subject: int
    other: int
    quantifier: str
    offsets: tuple[int, ...]

    def mask(self, mode: Mode, grid: np.ndarray) -> np.ndarray:
        checkpoint()
        subjects = grid == self.subject
        near = _rolled_or(grid == self.other, list(self.offsets))
        if self.quantifier == "all":
            return cast(np.ndarray, ~np.any(subjects & ~near, axis=1))
        hit = np.any(subjects & near, axis=1)
        return cast(np.ndarray, hit if self.quantifier == "some" else ~hit)

    def _near(self, mode: Mode, board: Sequence[int], sector: int) -> bool:
        return any(board[(sector - 1 - d) % mode.sectors] == self.other for d in self.offsets)

    def holds(self, mode: Mode, board: Sequence[int]) -> bool:
        hits = [
            self._near(mode, board, s) for s in range(1, mode.sectors + 1) if board[s - 1] == self.subject
        ]
        judge: Callable[[list[bool]], bool] = {"all": all, "some": any}.get(
            self.quantifier, lambda h: not any(h)
        )
        return judge(hits)

    def constraint(self, model: BoardModel) -> z3.BoolRef:
        offsets = list(self.offsets)
        sectors = range(1, model.mode.sectors + 1)
        if self.quantifier == "all":
            return z3.And(
                [
                    z3.Implies(model.at(s, self.subject), _z3_near(model, s, self.other, offsets))
                    for s in sectors
                ]
            )
        some = z3.Or(
            [z3.And(model.at(s, self.subject), _z3_near(model, s, self.other, offsets)) for s in sectors]
        )
        return some if self.quantifier == "some" else z3.Not(some)


@dataclass(frozen=True)
class Band:
    """Every `subject` lies in a band of `width` consecutive sectors (at most, or exactly that: the
    narrowest band holding them all is `width` wide)."""

    subject: int
    width: int
    exact: bool

    def _fits(self, mode: Mode, width: int) -> list[list[int]]:
        """The 1-based sectors of every band of this width."""
        if width >= mode.sectors:
            return [list(range(1, mode.sectors + 1))]
        return [
            arc(mode, start, (start + width - 2) % mode.sectors + 1) for start in range(1, mode.sectors + 1)
        ]

    def mask(self, mode: Mode, grid: np.ndarray) -> np.ndarray:
        checkpoint()
        subjects = grid == self.subject

        def within(width: int) -> np.ndarray:
            if width <= 0:
                return cast(np.ndarray, ~np.any(subjects, axis=1))
            out = np.zeros(len(grid), dtype=bool)
            for band in self._fits(mode, width):
                outside = [s - 1 for s in range(1, mode.sectors + 1) if s not in band]
                out |= ~np.any(subjects[:, outside], axis=1)
            return out

        fits = within(self.width)
        return fits & ~within(self.width - 1) if self.exact else fits

    def holds(self, mode: Mode, board: Sequence[int]) -> bool:
        where = {s for s in range(1, mode.sectors + 1) if board[s - 1] == self.subject}

        def within(width: int) -> bool:
            return not where if width <= 0 else any(where <= set(b) for b in self._fits(mode, width))

        return within(self.width) and not (self.exact and within(self.width - 1))

    def constraint(self, model: BoardModel) -> z3.BoolRef:
        mode = model.mode

        def within(width: int) -> z3.BoolRef:
            if width <= 0:
                return z3.And([z3.Not(model.at(s, self.subject)) for s in range(1, mode.sectors + 1)])
            return z3.Or(
                [
                    z3.And(
                        [z3.Not(model.at(s, self.subject)) for s in range(1, mode.sectors + 1) if s not in b]
                    )
                    for b in self._fits(mode, width)
                ]
            )

        fits = within(self.width)
        return z3.And(fits, z3.Not(within(self.width - 1))) if self.exact else fits


@dataclass(frozen=True)
class WrongLocate:
    """A failed attempt to locate Planet X: not (X in `sector` with `left` and `right` beside it)."""

    sector: int
    left: int
    right: int

    def _neighbours(self, mode: Mode) -> tuple[int, int]:
        return mode.neighbours(self.sector)

    def mask(self, mode: Mode, grid: np.ndarray) -> np.ndarray:
        left, right = self._neighbours(mode)
        return cast(
            np.ndarray,
            ~(
                (grid[:, self.sector - 1] == PLANET_X)
                & (grid[:, left - 1] == self.left)
                & (grid[:, right - 1] == self.right)
            ),
        )

    def holds(self, mode: Mode, board: Sequence[int]) -> bool:
        left, right = self._neighbours(mode)
        return not (
            board[self.sector - 1] == PLANET_X
            and board[left - 1] == self.left
            and board[right - 1] == self.right
        )

    def constraint(self, model: BoardModel) -> z3.BoolRef:
        left, right = self._neighbours(model.mode)
        return z3.Not(
            z3.And(model.at(self.sector, PLANET_X), model.at(left, self.left), model.at(right, self.right))
        )


def parse(mode: Mode, data: dict[str, Any]) -> Observation:
    """One observation from its (validated) JSON form."""
    kind = data["type"]
    if kind == "sector":
        return SectorIs(data["sector"], OBJECTS[data["object"]], data.get("present", True))
    if kind == "survey":
        return Survey(seen(data["object"]), data["first"], data["last"], data["count"])
    if kind == "target":
        return Target(data["sector"], seen(data["seen"]))
    if kind == "locate":
        return WrongLocate(data["sector"], OBJECTS[data["left"]], OBJECTS[data["right"]])
    if kind == "clue":
        return _clue(mode, data)
    raise ValueError(f"unknown observation type {kind!r}")


def _clue(mode: Mode, data: dict[str, Any]) -> Observation:
    subject = OBJECTS[data["subject"]]
    relation = data["relation"]
    if relation == "band":
        return Band(subject, data["width"], data.get("exact", False))
    other = OBJECTS[data["object"]]
    if relation == "adjacent":
        offsets = _offsets_within(mode, 1)
    elif relation == "opposite":
        offsets = [mode.sectors // 2]
    elif relation == "within":
        offsets = _offsets_within(mode, data["distance"])
    else:
        raise ValueError(f"unknown clue relation {relation!r}")
    return Near(subject, other, data["quantifier"], tuple(offsets))


def parse_all(mode: Mode, observations: Sequence[dict[str, Any]]) -> list[Observation]:
    return [parse(mode, data) for data in observations]
