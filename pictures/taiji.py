"""Taiji: the grid with its symbols (dice pips, flowers' petals, diamonds, in their colours), holes,
joined tiles, fixed tiles, and the solution's lit tiles."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from xml.etree.ElementTree import Element

from pictures.svg import INK, MUTED, Drawing, message

CELL, PAD, TOP = 52, 16, 40
LIT, UNLIT = "#f4efe1", "#3a3f55"
#: symbol colours as the Taiji Maker editor draws them (k white, w black); None: grey
COLOURS = {
    "r": "#e0413a",
    "o": "#f08c2e",
    "y": "#f2cf30",
    "g": "#37a34a",
    "b": "#3670d8",
    "p": "#8f45c7",
    "k": "#ffffff",
    "w": "#111111",
    None: "#9aa0ad",
}
COLOUR_NAMES = {
    "r": "red",
    "o": "orange",
    "y": "yellow",
    "g": "green",
    "b": "blue",
    "p": "purple",
    "k": "white",
    "w": "black",
}
PURPLE, YELLOW = "#8f45c7", "#f2cf30"
#: pip positions on a 3×3 lattice for 1..9 pips
PIPS = {
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)],
    5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
    6: [(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)],
    7: [(0, 0), (2, 0), (0, 1), (1, 1), (2, 1), (0, 2), (2, 2)],
    8: [(0, 0), (1, 0), (2, 0), (0, 1), (2, 1), (0, 2), (1, 2), (2, 2)],
    9: [(x, y) for y in range(3) for x in range(3)],
}


def grid(tiles: Sequence[Sequence[Mapping[str, Any] | None]], result: Mapping[str, Any]) -> str:
    """`tiles`: rows of tile dicts (symbol, value, colour, fixed, lit, hidden, join_left, join_up) or None
    for a hole; `result`: the solver's, whose `solution` says which tiles are lit."""
    solution = result.get("solution")
    height, width = len(tiles), max((len(row) for row in tiles), default=0)
    if not width:
        return message("an empty grid", "taiji")
    status = result.get("status", "")
    title = f"Taiji {width}×{height}: " + ("solved" if solution else f"no solution ({status})")
    if solution and result.get("unique") is not None:
        title += ", unique" if result["unique"] else ", not unique"
    drawing = Drawing(max(2 * PAD + width * CELL, 340), TOP + PAD + height * CELL, title, "taiji")
    drawing.text(PAD, 24, title, font_size=14, font_weight="bold")
    board = drawing.group(class_="board")
    for r, row in enumerate(tiles):
        for c, tile in enumerate(row):
            lit = _lit(solution, tile, r, c)
            _tile(drawing, board, r, c, tile, lit)
    return drawing.to_string()


def _lit(solution: Any, tile: Mapping[str, Any] | None, r: int, c: int) -> bool:
    if tile is None:
        return False
    if solution:
        return bool(solution[r][c])
    return bool(tile.get("fixed") and tile.get("lit"))


def _tile(
    drawing: Drawing, board: Element, r: int, c: int, tile: Mapping[str, Any] | None, lit: bool
) -> None:
    x, y = PAD + c * CELL, TOP + r * CELL
    if tile is None:
        group = drawing.group(
            f"row {r + 1}, column {c + 1}: hole", board, class_="tile hole", data_row=r, data_col=c
        )
        drawing.add(
            "rect",
            group,
            x=x + 3,
            y=y + 3,
            width=CELL - 6,
            height=CELL - 6,
            fill="none",
            stroke="#c5cad6",
            stroke_dasharray="4 3",
        )
        return
    state = "lit" if lit else "unlit"
    group = drawing.group(
        f"row {r + 1}, column {c + 1}: {_describe(tile)}, {state}",
        board,
        class_=f"tile {state}",
        data_row=r,
        data_col=c,
        data_lit=int(lit),
    )
    # joined tiles share an edge: the tile reaches over to its left/upper partner
    grow_left = 3 if tile.get("join_left") else 0
    grow_up = 3 if tile.get("join_up") else 0
    drawing.add(
        "rect",
        group,
        x=x + 2 - grow_left,
        y=y + 2 - grow_up,
        width=CELL - 4 + grow_left,
        height=CELL - 4 + grow_up,
        rx=5,
        fill=LIT if lit else UNLIT,
        stroke="#ffffff" if not tile.get("fixed") else "#b08d1a",
        stroke_width=1 if not tile.get("fixed") else 3,
    )
    if tile.get("join_left"):
        drawing.add(
            "rect", group, x=x - 6, y=y + CELL / 2 - 3, width=12, height=6, fill="#b08d1a", class_="join"
        )
    if tile.get("join_up"):
        drawing.add(
            "rect", group, x=x + CELL / 2 - 3, y=y - 6, width=6, height=12, fill="#b08d1a", class_="join"
        )
    if tile.get("hidden"):
        drawing.add("circle", group, cx=x + CELL - 9, cy=y + 9, r=3, fill=MUTED)
    _symbol(drawing, group, tile, x + CELL / 2, y + CELL / 2)


def _describe(tile: Mapping[str, Any]) -> str:
    symbol, value = tile.get("symbol"), tile.get("value") or 0
    colour = COLOUR_NAMES.get(tile.get("colour") or "", "")
    words = {
        "dice": f"{colour} die {value}",
        "flower": f"flower with {value} yellow petals",
        "diamond": f"{colour} diamond",
    }.get(symbol or "", "plain tile")
    extras = [w for w, on in (("fixed", tile.get("fixed")), ("hidden", tile.get("hidden"))) if on]
    return " ".join(words.split()) + (f" ({', '.join(extras)})" if extras else "")


def _symbol(drawing: Drawing, group: Element, tile: Mapping[str, Any], cx: float, cy: float) -> None:
    symbol, value = tile.get("symbol"), int(tile.get("value") or 0)
    colour = COLOURS.get(tile.get("colour"), COLOURS[None])
    if symbol == "dice":
        negative = value < 0
        for px, py in PIPS.get(abs(value), []):
            drawing.add(
                "circle",
                group,
                cx=cx + (px - 1) * 12,
                cy=cy + (py - 1) * 12,
                r=4.5,
                fill="none" if negative else colour,
                stroke=colour,
                stroke_width=2 if negative else 1,
                class_="pip",
            )
    elif symbol == "diamond":
        drawing.add(
            "path",
            group,
            d=f"M{cx} {cy - 13} L{cx + 10} {cy} L{cx} {cy + 13} L{cx - 10} {cy} Z",
            fill=colour,
            stroke="#000000",
            stroke_opacity=0.3,
            class_="diamond",
        )
    elif symbol == "flower":
        # four petals, the first `value` of them yellow, the rest purple
        for i, (dx, dy) in enumerate(((0, -1), (1, 0), (0, 1), (-1, 0))):
            drawing.add(
                "ellipse",
                group,
                cx=cx + dx * 10,
                cy=cy + dy * 10,
                rx=7 if dx else 5,
                ry=5 if dx else 7,
                fill=YELLOW if i < value else PURPLE,
                class_="petal",
            )
        drawing.add("circle", group, cx=cx, cy=cy, r=4, fill=INK)
