"""What a Planet X player learns, as filters over boards.

Every observation can be read three ways, and the tests hold them to agree:
- `mask(grid)`: vectorised over a board matrix (numpy, one row per board): how deductions filter;
- `holds(board)`: one board in plain Python: the brute-force reference;
- `constraint(model)`: a Z3 formula over a `BoardModel`: for Z3 model counting.

The JSON form (see `schemas/planetx.py`) is turned into these classes by `parse`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
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


class SectorBits:
    """Per board of a grid, which sectors hold an object: bit s - 1 of one 32-bit word per board for sector
    s, found per object on first use. Clues about where objects lie are a few word operations per board
    on these (a board matrix per offset costs many times more)."""

    def __init__(self, mode: Mode, grid: np.ndarray):
        assert mode.sectors <= 32, "a board's sectors must fit a 32-bit word"
        self.mode = mode
        self.grid = grid
        self.full = np.uint32((1 << mode.sectors) - 1)
        self._holding: dict[int, np.ndarray] = {}

    def holding(self, obj: int) -> np.ndarray:
        """Per board, the word of the sectors holding `obj` (read-only: every clue shares it)."""
        words = self._holding.get(obj)
        if words is None:
            packed = np.packbits(self.grid == obj, axis=1, bitorder="little")
            padded = np.zeros((len(self.grid), 4), dtype=np.uint8)
            padded[:, : packed.shape[1]] = packed
            words = self._holding[obj] = padded.view("<u4").ravel().astype(np.uint32)
            words.flags.writeable = False
        return words

    def rotated(self, words: np.ndarray, shift: int) -> np.ndarray:
        """Each board's sectors moved `shift` sectors on (sector s to s + shift, around the circle)."""
        shift %= self.mode.sectors
        if not shift:
            return words
        left, right = np.uint32(shift), np.uint32(self.mode.sectors - shift)
        return cast(np.ndarray, ((words << left) | (words >> right)) & self.full)

    @staticmethod
    def word(sectors: Iterable[int]) -> np.uint32:
        """The word of these 1-based sectors."""
        return np.uint32(sum(1 << (s - 1) for s in set(sectors)))


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
        return self.on_bits(SectorBits(mode, grid))

    def on_bits(self, bits: SectorBits) -> np.ndarray:
        checkpoint()
        subjects = bits.holding(self.subject)
        others = bits.holding(self.other)
        near = np.zeros_like(others)
        for shift in self.offsets:
            near |= bits.rotated(others, shift)
        if self.quantifier == "all":
            return cast(np.ndarray, (subjects & ~near) == 0)
        hit = (subjects & near) != 0
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
        return self.on_bits(SectorBits(mode, grid))

    def on_bits(self, bits: SectorBits) -> np.ndarray:
        checkpoint()
        subjects = bits.holding(self.subject)

        def within(width: int) -> np.ndarray:
            if width <= 0:
                return cast(np.ndarray, subjects == 0)
            out = np.zeros(len(subjects), dtype=bool)
            for band in self._fits(bits.mode, width):
                out |= (subjects & ~SectorBits.word(band)) == 0
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
        return parse_clue(mode, data)
    raise ValueError(f"unknown observation type {kind!r}")


def parse_clue(mode: Mode, data: dict[str, Any]) -> Near | Band:
    """A research or conference clue from its (validated) JSON form."""
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
