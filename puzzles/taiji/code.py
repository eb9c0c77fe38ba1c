"""Taiji puzzles as data: the Taiji Maker puzzle code and the explicit JSON grid, both read into a `Puzzle`.

Pure Python (no Z3), so the API can validate codes without loading the solver.

A code is `<width>:<body>`. The body lists tiles row by row after run-length expansion (`+L` = ord(L) − 64
plain tiles, then `-L` = that many holes). A lone `0` is a plain tile; any other tile is
`[connector][SYMBOL][colour]digit`: connector `<` (joined left), `^` (joined up) or `/` (both); symbol `A`–`I`
dice 1…9, `J`–`R` dice −1…−9, `S` diamond, `V`–`Z` flower with 0…4 yellow petals (`T`/`U` line symbols are
not supported); colour one of `roygbpkw`; digit `8` = hole, else bits 4 fixed, 2 lit, 1 hidden.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

MAX_SIDE = 32
COLOURS = "roygbpkw"
SYMBOLS = ("dice", "flower", "diamond")
CONNECTORS = {"<": (True, False), "^": (False, True), "/": (True, True)}
_VALUE_RANGES: dict[str | None, range] = {"dice": range(-9, 10), "flower": range(5), "diamond": range(1)}
#: the only digits of a code (str.isdigit() also holds for '²', '٣', '１'...)
DIGITS = "0123456789"


class PuzzleError(ValueError):
    """The puzzle description is malformed or unsupported."""


class PuzzleCodeError(PuzzleError):
    """A Taiji Maker puzzle code cannot be read."""


class PuzzleGridError(PuzzleError):
    """An explicit grid cannot be read."""


@dataclass(frozen=True)
class Tile:
    """One existing tile. `value` is the pips of a die (negative for negative dice), the yellow petals of a
    flower, else 0. `lit` is the state of a fixed tile (always False on free tiles)."""

    symbol: str | None = None
    value: int = 0
    colour: str | None = None
    fixed: bool = False
    lit: bool = False
    hidden: bool = False
    join_left: bool = False
    join_up: bool = False


@dataclass(frozen=True)
class Puzzle:
    width: int
    height: int
    #: row by row; None is a hole
    tiles: tuple[Tile | None, ...]

    def at(self, row: int, col: int) -> Tile | None:
        return self.tiles[row * self.width + col]

    def rows(self) -> list[list[Tile | None]]:
        return [list(self.tiles[r * self.width : (r + 1) * self.width]) for r in range(self.height)]

    @property
    def has_fixed(self) -> bool:
        return any(t is not None and t.fixed for t in self.tiles)

    def features(self) -> list[str]:
        """Which symbols (and holes, joins) the puzzle uses, e.g. ["dice", "diamond"]."""
        present = {t.symbol for t in self.tiles if t is not None and t.symbol}
        found = [s for s in SYMBOLS if s in present]
        if any(t is None for t in self.tiles):
            found.append("holes")
        if any(t is not None and (t.join_left or t.join_up) for t in self.tiles):
            found.append("joins")
        return found


def parse_code(code: str) -> Puzzle:
    """Read a Taiji Maker puzzle code; raises PuzzleCodeError naming the faulty part."""
    width_text, sep, body = code.strip().partition(":")
    if not sep:
        raise PuzzleCodeError("a puzzle code looks like '<width>:<tiles>' (no ':' found)")
    if not width_text or any(c not in DIGITS for c in width_text) or int(width_text) < 1:
        raise PuzzleCodeError(f"width {width_text!r} is not a positive integer")
    width = int(width_text)
    if width > MAX_SIDE:
        raise PuzzleCodeError(f"width {width} is larger than {MAX_SIDE}")
    body = _expand(_expand(body, "+", "0"), "-", "8")
    tiles = _read_tiles(body, width)
    if not tiles:
        raise PuzzleCodeError("the code lists no tiles")
    if len(tiles) % width:
        raise PuzzleCodeError(
            f"{len(tiles)} tiles do not fill rows of width {width} (last row has {len(tiles) % width})"
        )
    height = len(tiles) // width
    if height > MAX_SIDE:
        raise PuzzleCodeError(f"height {height} is larger than {MAX_SIDE}")
    return _joined_checked(Puzzle(width, height, tuple(tiles)), PuzzleCodeError)


def _expand(body: str, sign: str, fill: str) -> str:
    head, *chunks = body.split(sign)
    out = [head]
    for n, chunk in enumerate(chunks, 1):
        if not chunk or not "A" <= chunk[0] <= "Z":
            raise PuzzleCodeError(
                f"run-length chunk {n} after {sign!r} ({sign}{chunk[:6]}) must start with a letter A–Z"
            )
        out.append(fill * (ord(chunk[0]) - 64) + chunk[1:])
    return "".join(out)


def _read_tiles(body: str, width: int) -> list[Tile | None]:
    tiles: list[Tile | None] = []
    i = 0
    while i < len(body):
        tile, i = _read_tile(body, i, width, tiles)
        tiles.append(tile)
    return tiles


def _read_tile(body: str, i: int, width: int, tiles: list[Tile | None]) -> tuple[Tile | None, int]:
    """The tile starting at body[i] (preceded by `tiles`), and where the next one starts."""
    if body[i] == "0":
        return Tile(), i + 1
    index, start = len(tiles), i
    where = f"tile {index} (row {index // width}, column {index % width})"
    join_left, join_up = CONNECTORS.get(body[i], (False, False))
    i += body[i] in CONNECTORS
    symbol, value = None, 0
    if i < len(body) and "A" <= body[i] <= "Z":
        symbol, value = _symbol(body[i], where)
        i += 1
    colour = body[i] if i < len(body) and body[i] in COLOURS else None
    i += colour is not None
    if i >= len(body) or body[i] not in DIGITS:
        got = repr(body[i]) if i < len(body) else "the end of the code"
        expected = "an option digit 0–8" if i > start else "a tile: [<^/][A–Z][roygbpkw]digit, or 0"
        after = f" after {body[start:i]!r}" if i > start else ""
        raise PuzzleCodeError(f"{where}: expected {expected}{after}, found {got}")
    option = int(body[i])
    if option > 8:
        raise PuzzleCodeError(f"{where}: option digit {option} is not 0–8")
    if option == 8:
        if join_left or join_up:
            raise PuzzleCodeError(f"{where}: a hole cannot be joined to another tile")
        return None, i + 1
    problem = _join_problem(join_left, join_up, index, width, tiles)
    if problem:
        raise PuzzleCodeError(f"{where}: {problem}")
    fixed = bool(option & 4)
    lit, hidden = fixed and bool(option & 2), bool(option & 1)
    return Tile(symbol, value, colour, fixed, lit, hidden, join_left, join_up), i + 1


def _symbol(letter: str, where: str) -> tuple[str | None, int]:
    code = ord(letter) - ord("A")
    if code < 9:
        return "dice", code + 1
    if code < 18:
        return "dice", -(code - 8)
    if letter == "S":
        return "diamond", 0
    if letter in "TU":
        name = "dash" if letter == "T" else "slash"
        raise PuzzleCodeError(f"{where}: line symbols are not supported ({letter} = {name})")
    return "flower", ord(letter) - ord("V")


def _join_problem(left: bool, up: bool, index: int, width: int, tiles: list[Tile | None]) -> str | None:
    if left and (index % width == 0 or tiles[index - 1] is None):
        return "joined to the left, but there is no tile on its left"
    if up and (index < width or tiles[index - width] is None):
        return "joined upwards, but there is no tile above it"
    return None


def _joined_checked(puzzle: Puzzle, error: type[PuzzleError]) -> Puzzle:
    """Joined tiles flip together, so two joined fixed tiles must agree."""
    for index, tile in enumerate(puzzle.tiles):
        if tile is None or not tile.fixed:
            continue
        joined = [index - 1] * tile.join_left + [index - puzzle.width] * tile.join_up
        for other_index in joined:
            other = puzzle.tiles[other_index]
            if other is not None and other.fixed and other.lit != tile.lit:
                row, col = divmod(index, puzzle.width)
                raise error(
                    f"tile {index} (row {row}, column {col}) is joined to a fixed tile of the other state"
                )
    return puzzle


# -- the explicit grid ---------------------------------------------------------------------------------

_TILE_KEYS = {field.name for field in fields(Tile)}


def read_grid(rows: Sequence[Sequence[Mapping[str, Any] | None]]) -> Puzzle:
    """Read the explicit form: rows of tiles, each None (a hole) or a dict of `Tile` fields (all optional:
    no symbol, value 0, no colour, free, unlit, shown, not joined). Raises PuzzleGridError."""
    if not rows or not rows[0]:
        raise PuzzleGridError("the grid needs at least one row of at least one tile")
    height, width = len(rows), len(rows[0])
    if width > MAX_SIDE or height > MAX_SIDE:
        raise PuzzleGridError(f"the grid is {width}×{height}; at most {MAX_SIDE}×{MAX_SIDE} is supported")
    tiles: list[Tile | None] = []
    for r, row in enumerate(rows):
        if len(row) != width:
            raise PuzzleGridError(f"row {r} has {len(row)} tiles, row 0 has {width}")
        for c, raw in enumerate(row):
            index = len(tiles)
            tile = None if raw is None else _grid_tile(raw, f"row {r}, column {c}")
            problem = tile and _join_problem(tile.join_left, tile.join_up, index, width, tiles)
            if problem:
                raise PuzzleGridError(f"row {r}, column {c}: {problem}")
            tiles.append(tile)
    return _joined_checked(Puzzle(width, height, tuple(tiles)), PuzzleGridError)


def _grid_tile(raw: Mapping[str, Any], where: str) -> Tile:
    if not isinstance(raw, Mapping):
        raise PuzzleGridError(f"{where}: a tile is null (a hole) or an object")
    unknown = set(raw) - _TILE_KEYS
    if unknown:
        raise PuzzleGridError(f"{where}: unknown tile fields {sorted(unknown)}")
    symbol, value, colour = raw.get("symbol"), raw.get("value", 0), raw.get("colour")
    if symbol is not None and symbol not in SYMBOLS:
        raise PuzzleGridError(f"{where}: symbol {symbol!r} is not one of {list(SYMBOLS)} or null")
    if colour is not None and (not isinstance(colour, str) or len(colour) != 1 or colour not in COLOURS):
        raise PuzzleGridError(f"{where}: colour {colour!r} is not one of {list(COLOURS)} or null")
    if not isinstance(value, int) or isinstance(value, bool):
        raise PuzzleGridError(f"{where}: value must be an integer")
    if value not in _VALUE_RANGES.get(symbol, range(1)) or (symbol == "dice" and value == 0):
        raise PuzzleGridError(f"{where}: value {value} is not allowed for {symbol or 'a plain tile'}")
    flags = {key: raw.get(key, False) for key in ("fixed", "lit", "hidden", "join_left", "join_up")}
    if not all(isinstance(v, bool) for v in flags.values()):
        raise PuzzleGridError(f"{where}: fixed, lit, hidden, join_left and join_up must be booleans")
    flags["lit"] = flags["lit"] and flags["fixed"]
    return Tile(symbol, value, colour, **flags)


def to_grid(puzzle: Puzzle) -> list[list[dict[str, Any] | None]]:
    """The explicit form of a puzzle (what `read_grid` reads back)."""
    return [[None if t is None else asdict(t) for t in row] for row in puzzle.rows()]


def puzzle_from_params(params: Mapping[str, Any]) -> Puzzle:
    """The puzzle of a job's params: `code` (a puzzle code) or `grid` (the explicit form)."""
    if params.get("code") is not None:
        return parse_code(params["code"])
    if params.get("grid") is not None:
        return read_grid(params["grid"])
    raise PuzzleError("give either a puzzle code or a grid")
