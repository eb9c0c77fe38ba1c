"""The placement rules of both modes, as an independent plain-Python check and as a backtracking
enumerator (no Z3): the cross-check for the Z3 enumeration and its speed reference."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from puzzles.planetx.board import ASTEROID, BITS, COMET, DWARF_PLANET, EMPTY, GAS_CLOUD, PLANET_X, Mode
from puzzles.runtime import checkpoint

#: an extra fact: (sector, object, present)
Fact = tuple[int, int, bool]


def sector_ok(mode: Mode, board: Sequence[int], sector: int) -> bool:
    """The rules about one sector and its neighbours (1-based), on a complete board."""
    obj = board[sector - 1]
    left, right = (board[s - 1] for s in mode.neighbours(sector))
    if obj == COMET:
        return sector in mode.primes
    if obj == ASTEROID:
        return ASTEROID in (left, right)
    if obj == GAS_CLOUD:
        return EMPTY in (left, right)
    if obj == DWARF_PLANET:
        return PLANET_X not in (left, right)
    if obj == PLANET_X:
        return DWARF_PLANET not in (left, right)
    return True


def band_ok(mode: Mode, board: Sequence[int]) -> bool:
    """Expert: every dwarf planet in one band of exactly `dwarf_band` sectors with dwarfs at both ends."""
    if not mode.dwarf_band:
        return True
    n, width = mode.sectors, mode.dwarf_band
    dwarfs = {i for i, obj in enumerate(board) if obj == DWARF_PLANET}
    for start in dwarfs:
        end = (start + width - 1) % n
        if end in dwarfs and all((i - start) % n < width for i in dwarfs):
            return True
    return False


def is_valid(mode: Mode, board: Sequence[int], facts: Sequence[Fact] = ()) -> bool:
    if len(board) != mode.sectors:
        return False
    if tuple(board.count(obj) for obj in range(6)) != mode.counts:
        return False
    if not all(sector_ok(mode, board, s) for s in range(1, mode.sectors + 1)):
        return False
    if any((board[s - 1] == obj) != present for s, obj, present in facts):
        return False
    return band_ok(mode, board)


def enumerate_boards(mode: Mode, facts: Sequence[Fact] = (), prefix: Sequence[int] = ()) -> list[int]:
    """Every valid board (as codes), placing objects rather than sectors: dwarf planets, then Planet X,
    comets, asteroids, gas clouds, and empty space in what is left. Sets of sectors are bitmasks.
    Optionally only boards whose first sectors are `prefix`. Each placement of Planet X (a small fraction
    of the work) is a checkpoint of the run the enumeration is inside, if any."""
    n = mode.sectors
    full = (1 << n) - 1
    must = [0] * 6  # sectors that must hold each object
    never = [0] * 6  # sectors that must not
    for s, obj, present in [*facts, *((i + 1, obj, True) for i, obj in enumerate(prefix))]:
        if present:
            must[obj] |= 1 << (s - 1)
            never = [mask | (1 << (s - 1)) if other != obj else mask for other, mask in enumerate(never)]
        else:
            never[obj] |= 1 << (s - 1)
    prime_mask = sum(1 << (p - 1) for p in mode.primes)
    never[COMET] |= full & ~prime_mask
    counts = mode.counts
    found: list[int] = []

    def choose(obj: int, free: int) -> list[int]:
        """Masks of `counts[obj]` sectors for `obj` among `free`, honouring the facts."""
        options = free & ~never[obj]
        if must[obj] & ~options:
            return []
        sectors = [1 << i for i in range(n) if options >> i & 1]
        needed = must[obj]
        masks = (sum(combo) for combo in combinations(sectors, counts[obj]))
        return [mask for mask in masks if mask & needed == needed]

    def beside(company: int) -> int:
        """The sectors with a neighbour in `company` (around the circle)."""
        return (company << 1 | company >> 1 | company << (n - 1) | company >> (n - 1)) & full

    def lone(mask: int, company: int) -> bool:
        """Is some sector of `mask` without a neighbour in `company`?"""
        return bool(mask & ~beside(company))

    for dwarfs in choose(DWARF_PLANET, full):
        if mode.dwarf_band and not band_ok(
            mode, [DWARF_PLANET if dwarfs >> i & 1 else EMPTY for i in range(n)]
        ):
            continue
        after_dwarfs = full & ~dwarfs
        code = _placed(DWARF_PLANET, dwarfs)
        for planet_x in choose(PLANET_X, after_dwarfs):
            checkpoint()
            if planet_x & beside(dwarfs):
                continue
            with_x = code + _placed(PLANET_X, planet_x)
            for comets in choose(COMET, after_dwarfs & ~planet_x):
                free = after_dwarfs & ~planet_x & ~comets
                with_comets = with_x + _placed(COMET, comets)
                for asteroids in choose(ASTEROID, free):
                    if lone(asteroids, asteroids):
                        continue
                    rest = free & ~asteroids
                    with_asteroids = with_comets + _placed(ASTEROID, asteroids)
                    for gas in choose(GAS_CLOUD, rest):
                        empty = rest & ~gas
                        if lone(gas, empty) or empty & never[EMPTY] or must[EMPTY] & ~empty:
                            continue
                        found.append(with_asteroids + _placed(GAS_CLOUD, gas))  # empty is 0
    return found


#: per byte of a set of sectors, a board code with 1 in the field of each of its sectors
_FIELDS = [sum(1 << (BITS * i) for i in range(8) if byte >> i & 1) for byte in range(256)]


def _placed(obj: int, sectors: int) -> int:
    """The board code of `obj` in each of `sectors` (a bit mask) and empty elsewhere."""
    code, shift = 0, 0
    while sectors:
        code |= _FIELDS[sectors & 0xFF] << shift
        sectors >>= 8
        shift += 8 * BITS
    return obj * code
