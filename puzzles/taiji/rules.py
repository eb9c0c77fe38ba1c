"""The Taiji rules evaluated on a finished grid, in plain Python (no Z3): the independent check of every
answer the solver returns."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from puzzles.taiji.code import Puzzle, Tile

Grid = Sequence[Sequence[int | bool | None]]


def neighbours(puzzle: Puzzle, index: int) -> Iterator[int]:
    """The existing tiles orthogonally next to tile `index` (holes are nobody's neighbour)."""
    row, col = divmod(index, puzzle.width)
    for r, c in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)):
        if 0 <= r < puzzle.height and 0 <= c < puzzle.width and puzzle.at(r, c) is not None:
            yield r * puzzle.width + c


def areas(puzzle: Puzzle, lit: Sequence[bool | None]) -> list[list[int]]:
    """The maximal 4-connected groups of existing tiles with the same state, each listed by tile index."""
    seen: set[int] = set()
    found = []
    for start, tile in enumerate(puzzle.tiles):
        if tile is None or start in seen:
            continue
        seen.add(start)
        area, todo = [], [start]
        while todo:
            index = todo.pop()
            area.append(index)
            for n in neighbours(puzzle, index):
                if n not in seen and lit[n] == lit[start]:
                    seen.add(n)
                    todo.append(n)
        found.append(sorted(area))
    return found


def colour_counts(tiles: Sequence[Tile]) -> Counter[str | None]:
    """How many symbols of each colour count towards diamonds: a flower is purple unless all 4 petals are
    yellow, and yellow unless none is; other symbols count as their colour (None = uncoloured)."""
    counts: Counter[str | None] = Counter()
    for tile in tiles:
        if tile.symbol == "flower":
            counts["p"] += tile.value < 4
            counts["y"] += tile.value > 0
        elif tile.symbol is not None:
            counts[tile.colour] += 1
    return counts


def violations(puzzle: Puzzle, solution: Grid) -> list[str]:
    """Every broken rule, in words; an empty list means `solution` (rows of 0/1, None for holes) solves it."""
    shape = _shape_problem(puzzle, solution)
    if shape:
        return [shape]
    lit = [None if v is None else bool(v) for row in solution for v in row]
    problems = []
    for index, tile in enumerate(puzzle.tiles):
        if tile is None:
            continue
        where = f"tile {index} (row {index // puzzle.width}, column {index % puzzle.width})"
        if tile.fixed and lit[index] != tile.lit:
            problems.append(f"{where} is fixed {'lit' if tile.lit else 'unlit'}")
        joined = [index - 1] * tile.join_left + [index - puzzle.width] * tile.join_up
        if any(lit[j] != lit[index] for j in joined):
            problems.append(f"{where} is joined to a tile of the other state")
        if tile.symbol == "flower":
            same = sum(lit[n] == lit[index] for n in neighbours(puzzle, index))
            if same != tile.value:
                problems.append(f"{where}: flower with {tile.value} yellow petals has {same} same neighbours")
    for area in areas(puzzle, lit):
        problems.extend(_area_problems(puzzle, area))
    return problems


def is_valid(puzzle: Puzzle, solution: Grid) -> bool:
    return not violations(puzzle, solution)


def _shape_problem(puzzle: Puzzle, solution: Grid) -> str | None:
    if len(solution) != puzzle.height or any(len(row) != puzzle.width for row in solution):
        return f"the solution is not {puzzle.height} rows of {puzzle.width}"
    for index, tile in enumerate(puzzle.tiles):
        value = solution[index // puzzle.width][index % puzzle.width]
        if (tile is None) != (value is None):
            return f"tile {index}: holes (and only holes) must be None"
        if value is not None and value not in (0, 1):
            return f"tile {index}: {value!r} is not 0 or 1"
    return None


def _area_problems(puzzle: Puzzle, area: list[int]) -> Iterator[str]:
    symbols = [t for t in (puzzle.tiles[i] for i in area) if t is not None and t.symbol is not None]
    dice = [t for t in symbols if t.symbol == "dice"]
    where = f"the area of tile {area[0]}"
    if len({t.colour for t in dice}) > 1:
        yield f"{where} holds dice of several colours"
    pips = sum(t.value for t in dice)
    if pips not in (0, len(area)):
        yield f"{where} has {len(area)} tiles but its dice add up to {pips}"
    counts = colour_counts(symbols)
    for colour, diamonds in Counter(t.colour for t in symbols if t.symbol == "diamond").items():
        if counts[colour] != 2:
            others = counts[colour] - diamonds
            name = colour or "uncoloured"
            yield f"{where} has {diamonds} {name} diamonds and {others} other {name} symbols"
