"""The Search for Planet X: the board as a ring of sectors, each object's probability per sector as a
band of the ring, Planet X's candidate sectors outlined; a simulation as its days histogram."""

from __future__ import annotations

from typing import Any

from pictures.svg import (
    INK,
    LINE,
    MUTED,
    Drawing,
    band_path,
    bar_chart,
    histogram_bars,
    message,
    percent,
    polar,
)

#: drawn from the centre outwards; Planet X outermost, where its candidates are outlined
OBJECTS = ("empty", "gas_cloud", "dwarf_planet", "asteroid", "comet", "planet_x")
LABELS = {
    "empty": "empty",
    "gas_cloud": "gas cloud",
    "dwarf_planet": "dwarf planet",
    "asteroid": "asteroid",
    "comet": "comet",
    "planet_x": "Planet X",
}
COLOURS = {
    "empty": "#9aa3b5",
    "gas_cloud": "#3a86c8",
    "dwarf_planet": "#e07b39",
    "asteroid": "#7a5c48",
    "comet": "#1f9e89",
    "planet_x": "#8e2bbf",
}
SIZE, CX, CY, INNER, OUTER = 560, 280, 290, 70, 240
HIGHLIGHT = "#f2b705"


def sector_probabilities(result: dict[str, Any]) -> list[tuple[int, dict[str, float]]]:
    """Per sector, each object's probability: as given (deduce) or from board counts (enumerate)."""
    sectors = []
    total = result.get("count") or 0
    for entry in result.get("sectors") or []:
        if "probabilities" in entry:
            odds = {k: float(v) for k, v in (entry["probabilities"] or {}).items()}
        else:
            counts = entry.get("counts") or {}
            odds = {k: (v / total if total else 0.0) for k, v in counts.items()}
        sectors.append((int(entry["sector"]), odds))
    return sorted(sectors)


def board(result: dict[str, Any]) -> str:
    """The ring: one wedge per sector, one band per object (opacity = probability, the figure written in
    it); a sector that may hold Planet X is outlined, more boldly the likelier it is."""
    if result.get("status") == "contradiction":
        return message(f"no board fits: {result.get('message') or 'the observations contradict'}", "planetx")
    sectors = sector_probabilities(result)
    if not sectors:
        return message("no sectors in this result", "planetx")
    width = SIZE + 170
    boards = result.get("boards", result.get("count"))
    title = f"Planet X board, {len(sectors)} sectors" + (f", {boards:,} boards" if boards is not None else "")
    drawing = Drawing(width, SIZE + 20, title, "planetx")
    drawing.text(16, 24, title, font_size=15, font_weight="bold")
    step = 360 / len(sectors)
    ring = (OUTER - INNER) / len(OBJECTS)
    likeliest = max((odds.get("planet_x", 0.0) for _, odds in sectors), default=0.0) or 1.0
    for index, (sector, odds) in enumerate(sectors):
        a0, a1 = index * step, (index + 1) * step
        _sector(drawing, sector, odds, (a0, a1), ring, odds.get("planet_x", 0.0) / likeliest)
    _legend(drawing, SIZE + 10, 60, result)
    return drawing.to_string()


def _sector(
    drawing: Drawing,
    sector: int,
    odds: dict[str, float],
    angles: tuple[float, float],
    ring: float,
    weight: float,
) -> None:
    """One wedge; `weight` is its Planet X odds relative to the likeliest sector's (its outline's width)."""
    a0, a1 = angles
    x_odds = odds.get("planet_x", 0.0)
    group = drawing.group(
        f"sector {sector}" + (f": Planet X {percent(x_odds)}" if x_odds else ""),
        class_="sector candidate" if x_odds > 0 else "sector",
        data_sector=sector,
    )
    for level, name in enumerate(OBJECTS):
        p = odds.get(name, 0.0)
        r0, r1 = INNER + level * ring, INNER + (level + 1) * ring
        band = drawing.group(
            f"sector {sector} · {LABELS[name]} {percent(p)}",
            group,
            class_="odds",
            data_object=name,
            data_p=f"{p:.4f}",
        )
        drawing.add(
            "path",
            band,
            d=band_path(CX, CY, r0, r1, a0, a1),
            fill=COLOURS[name],
            fill_opacity=round(0.06 + 0.94 * p, 3),
            stroke="#ffffff",
            stroke_width=1,
        )
        if p >= 0.005:
            x, y = polar(CX, CY, (r0 + r1) / 2, (a0 + a1) / 2)
            drawing.text(
                round(x, 1),
                round(y + 3.5, 1),
                f"{100 * p:.0f}",
                band,
                font_size=10,
                text_anchor="middle",
                fill="#ffffff" if p > 0.45 else INK,
            )
    if x_odds > 0:
        drawing.add(
            "path",
            group,
            d=band_path(CX, CY, INNER, OUTER, a0, a1),
            fill="none",
            stroke=HIGHLIGHT,
            stroke_width=round(1 + 5 * weight, 2),
            class_="highlight",
        )
    x, y = polar(CX, CY, OUTER + 18, (a0 + a1) / 2)
    drawing.text(
        round(x, 1), round(y + 5, 1), sector, group, font_size=14, font_weight="bold", text_anchor="middle"
    )


def _legend(drawing: Drawing, x: float, y: float, result: dict[str, Any]) -> None:
    legend = drawing.group(class_="legend")
    for i, name in enumerate(reversed(OBJECTS)):
        drawing.add("rect", legend, x=x, y=y + i * 22, width=14, height=14, fill=COLOURS[name])
        drawing.text(x + 20, y + i * 22 + 12, LABELS[name], legend)
    y += len(OBJECTS) * 22 + 8
    drawing.add("rect", legend, x=x, y=y, width=14, height=14, fill="none", stroke=HIGHLIGHT, stroke_width=3)
    drawing.text(x + 20, y + 12, "may hold Planet X", legend)
    drawing.text(x, y + 34, "figures: % of boards", legend, font_size=11, fill=MUTED)
    candidates = [c for c in result.get("planet_x") or [] if c.get("probability")]
    if candidates:
        drawing.text(x, y + 62, "Planet X", legend, font_weight="bold")
        for i, c in enumerate(candidates[:8]):
            drawing.text(
                x,
                y + 80 + i * 16,
                f"sector {c['sector']}: {percent(c['probability'])}",
                legend,
                font_size=11,
                class_="candidate-odds",
            )
    locate = result.get("locate")
    if isinstance(locate, dict) and locate.get("sector"):
        drawing.text(x, SIZE - 10, f"best locate: {locate['sector']}", legend, font_size=11, fill=MUTED)
    drawing.add("circle", legend, cx=CX, cy=CY, r=INNER - 6, fill="none", stroke=LINE)


def days(result: dict[str, Any]) -> str:
    """A simulation: how many games took how many days."""
    histogram = result.get("days_histogram") or {}
    if not histogram:
        return message("no finished games to draw", "planetx")
    bars = histogram_bars(histogram)
    title = f"{result.get('games', sum(n for _, n in bars))} games, policy {result.get('policy', '?')}"
    drawing = Drawing(640, 300, title, "planetx")
    drawing.text(16, 24, title, font_size=15, font_weight="bold")
    if result.get("avg_days") is not None:
        drawing.text(
            16, 44, f"average {result['avg_days']:.1f} days, median {result.get('median_days')}", fill=MUTED
        )
    bar_chart(drawing, 50, 60, 570, 180, bars, "days to locate Planet X")
    return drawing.to_string()
