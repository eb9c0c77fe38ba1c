"""Mastermind: the game as rows of coloured pegs, each with its black and white feedback pegs, and the
suggested next guess; whole games as their turns histogram and the first game's rows."""

from __future__ import annotations

import colorsys
from collections.abc import Mapping, Sequence
from typing import Any
from xml.etree.ElementTree import Element

from pictures.svg import INK, LINE, MUTED, Drawing, bar_chart, histogram_bars, message

#: the first colours are the board game's; past them, evenly spaced hues
BASE = ["#e0413a", "#3670d8", "#37a34a", "#f2cf30", "#f08c2e", "#8f45c7", "#1fb5b5", "#e36bb2"]
ROW, TOP, LEFT = 40, 44, 90


def palette(k: int) -> list[str]:
    extra = [colorsys.hls_to_rgb(i / max(1, k - 8), 0.5, 0.55) for i in range(max(0, k - 8))]
    return BASE[:k] + ["#" + "".join(f"{round(255 * v):02x}" for v in rgb) for rgb in extra]


def game(params: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """`mastermind.guess`: the history from the params, then the guess the result suggests."""
    n, k = int(params.get("n") or 0), int(params.get("k") or 0)
    rows = [(list(h["guess"]), h.get("black", 0), h.get("white", 0)) for h in params.get("history") or []]
    status = result.get("status", "")
    guess = result.get("guess")
    title = f"Mastermind n={n}, k={k}: {status}"
    if result.get("remaining") is not None:
        title += f", {result['remaining']:,} codes fit"
    return _board(title, n, k, rows, guess if status != "solved" else None)


def _board(title: str, n: int, k: int, rows: Sequence[tuple[list[int], int, int]], guess: Any) -> str:
    peg, pitch = _peg_size(n)
    width = LEFT + n * pitch + 30 + n * 11 + 20
    height = TOP + (len(rows) + (1 if guess else 0)) * ROW + 20
    drawing = Drawing(max(width, 420), height, title, "mastermind")
    drawing.text(12, 24, title, font_size=14, font_weight="bold")
    _turns(drawing, TOP, n, k, rows, guess)
    return drawing.to_string()


def _peg_size(n: int) -> tuple[int, int]:
    peg = max(6, min(14, 520 // max(1, 2 * n)))
    return peg, 2 * peg + 4


def _turns(
    drawing: Drawing, top: float, n: int, k: int, rows: Sequence[tuple[list[int], int, int]], guess: Any
) -> None:
    """One row per guess with its feedback, from `top` down; then the suggested guess, outlined."""
    peg, pitch = _peg_size(n)
    colours = palette(max(k, 1))
    for i, (code, black, white) in enumerate(rows):
        row = drawing.group(
            f"guess {i + 1}: {code}, {black} black, {white} white",
            class_="turn",
            data_black=black,
            data_white=white,
        )
        _row(drawing, row, top + i * ROW, f"{i + 1}", code, colours, peg, pitch)
        _feedback(drawing, row, LEFT + n * pitch + 20, top + i * ROW, n, black, white)
    if guess:
        y = top + len(rows) * ROW
        row = drawing.group(f"next guess: {guess}", class_="next-guess")
        drawing.add(
            "rect",
            row,
            x=LEFT - 8,
            y=y - 2,
            width=n * pitch + 12,
            height=ROW - 6,
            rx=6,
            fill="none",
            stroke="#2f5fd0",
            stroke_dasharray="5 3",
        )
        _row(drawing, row, y, "next", guess, colours, peg, pitch)


def _row(
    drawing: Drawing,
    row: Element,
    y: float,
    label: str,
    code: Sequence[int],
    colours: list[str],
    peg: int,
    pitch: int,
) -> None:
    drawing.text(12, y + ROW / 2, label, row, fill=MUTED)
    for j, colour in enumerate(code):
        cx = LEFT + j * pitch + peg
        fill = colours[colour] if 0 <= colour < len(colours) else "#cccccc"
        drawing.add(
            "circle",
            row,
            cx=cx,
            cy=y + ROW / 2 - 4,
            r=peg,
            fill=fill,
            stroke=INK,
            stroke_width=0.6,
            class_="peg",
            data_colour=colour,
        )
        if peg >= 9:
            drawing.text(cx, y + ROW / 2, colour, row, font_size=9, text_anchor="middle", fill="#ffffff")


def _feedback(drawing: Drawing, row: Element, x: float, y: float, n: int, black: int, white: int) -> None:
    """Key pegs in two rows: black first, then white, then empty holes."""
    per_row = max(1, (n + 1) // 2)
    for i in range(n):
        fill, stroke = (
            ("#111111", "#111111") if i < black else ("#ffffff", INK) if i < black + white else ("none", LINE)
        )
        cls = "black" if i < black else "white" if i < black + white else "empty"
        drawing.add(
            "circle",
            row,
            cx=x + (i % per_row) * 11 + 5,
            cy=y + 8 + (i // per_row) * 11,
            r=4.5,
            fill=fill,
            stroke=stroke,
            class_=f"key {cls}",
        )


def games(params: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """`mastermind.play`: turns per game, and the first game played out against its secret."""
    histogram = result.get("turn_histogram") or {}
    if not histogram:
        return message("no games to draw", "mastermind")
    n, k = int(params.get("n") or 0), int(params.get("k") or 0)
    played = result.get("games_count", sum(histogram.values()))
    title = f"{played} games, n={n}, k={k}: {result.get('avg_turns') or 0:.3f} turns on average"
    first = next(iter(result.get("games") or []), None)
    rows = [
        (list(g["guess"]), g.get("black", 0), g.get("white", 0)) for g in (first or {}).get("guesses", [])
    ]
    height = 260 + (40 + len(rows) * ROW if rows else 0)
    drawing = Drawing(640, height, title, "mastermind")
    drawing.text(16, 24, title, font_size=14, font_weight="bold")
    bar_chart(drawing, 50, 50, 570, 160, histogram_bars(histogram), "turns to break the code")
    if rows and first is not None:
        drawing.text(12, 276, f"first game, secret {first.get('secret')}", fill=MUTED)
        _turns(drawing, 290, n, k, rows, None)
    return drawing.to_string()
