"""Intransitive dice: each die's faces, and the win matrix (how many of the faces² rolls each die wins
against each other die), the cells where a die wins more than half its rolls in colour."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pictures.svg import INK, LINE, MUTED, Drawing, message

FACE, CELL = 26, 44
DIE_COLOURS = [
    "#e0413a",
    "#3670d8",
    "#37a34a",
    "#f08c2e",
    "#8f45c7",
    "#1fb5b5",
    "#e36bb2",
    "#7a5c48",
    "#f2cf30",
    "#555b6e",
]


def wins(a: list[int], b: list[int]) -> int:
    """Rolls (a face of each) in which die a shows more than die b."""
    return sum(1 for x in a for y in b if x > y)


def dice(result: Mapping[str, Any]) -> str:
    all_dice = result.get("dice")
    if not all_dice:
        return message(f"no dice ({result.get('status', 'no result')})", "dice")
    count, faces = len(all_dice), max(len(d) for d in all_dice)
    rolls = faces * faces
    title = f"{count} dice, {faces} faces" + (
        f": each winner wins {result['wins']}/{rolls}" if result.get("wins") is not None else ""
    )
    left_width = 70 + faces * (FACE + 4)
    matrix_x = left_width + 60
    width = matrix_x + (count + 1) * CELL + 20
    height = max(60 + count * (FACE + 10), 80 + (count + 1) * CELL) + 30
    drawing = Drawing(width, height, title, "dice")
    drawing.text(16, 24, title, font_size=14, font_weight="bold")
    for i, die in enumerate(all_dice):
        _die(drawing, i, die, 60 + i * (FACE + 10))
    _matrix(drawing, all_dice, matrix_x, 60, rolls)
    return drawing.to_string()


def _die(drawing: Drawing, i: int, die: list[int], y: float) -> None:
    group = drawing.group(f"die {i + 1}: {', '.join(map(str, die))}", class_="die")
    drawing.text(
        16,
        y + FACE / 2 + 5,
        f"die {i + 1}",
        group,
        fill=DIE_COLOURS[i % len(DIE_COLOURS)],
        font_weight="bold",
    )
    for j, face in enumerate(die):
        x = 70 + j * (FACE + 4)
        drawing.add(
            "rect",
            group,
            x=x,
            y=y,
            width=FACE,
            height=FACE,
            rx=4,
            fill="#ffffff",
            stroke=DIE_COLOURS[i % len(DIE_COLOURS)],
            stroke_width=2,
        )
        drawing.text(x + FACE / 2, y + FACE / 2 + 4, face, group, font_size=11, text_anchor="middle")


def _matrix(drawing: Drawing, all_dice: list[list[int]], x: float, y: float, rolls: int) -> None:
    """Row die against column die; the number is the row die's winning rolls."""
    matrix = drawing.group(class_="win-matrix")
    drawing.text(x, y - 8, "wins of row against column", matrix, font_size=11, fill=MUTED)
    for i in range(len(all_dice)):
        colour = DIE_COLOURS[i % len(DIE_COLOURS)]
        drawing.text(
            x + (i + 1.5) * CELL,
            y + CELL / 2 + 5,
            f"d{i + 1}",
            matrix,
            text_anchor="middle",
            fill=colour,
            font_weight="bold",
        )
        drawing.text(
            x + CELL / 2,
            y + (i + 1.5) * CELL + 5,
            f"d{i + 1}",
            matrix,
            text_anchor="middle",
            fill=colour,
            font_weight="bold",
        )
    for i, a in enumerate(all_dice):
        for j, b in enumerate(all_dice):
            cx, cy = x + (j + 1) * CELL, y + (i + 1) * CELL
            if i == j:
                drawing.add("rect", matrix, x=cx, y=cy, width=CELL, height=CELL, fill="#eef0f4", stroke=LINE)
                continue
            won = wins(a, b)
            cell = drawing.group(
                f"die {i + 1} beats die {j + 1} in {won} of {rolls} rolls",
                matrix,
                class_="cell",
                data_row=i,
                data_col=j,
                data_wins=won,
            )
            share = won / rolls if rolls else 0
            drawing.add(
                "rect",
                cell,
                x=cx,
                y=cy,
                width=CELL,
                height=CELL,
                stroke=LINE,
                fill="#2e8b57" if share > 0.5 else "#ffffff",
                fill_opacity=round(min(1, share), 3),
            )
            drawing.text(
                cx + CELL / 2,
                cy + CELL / 2 + 5,
                won,
                cell,
                text_anchor="middle",
                fill="#ffffff" if share > 0.6 else INK,
                font_weight="bold" if share > 0.5 else None,
            )
