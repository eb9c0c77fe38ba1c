"""Leaving Earth: the mission's route from top to bottom, each maneuver with its difficulty and the
rockets fired on it (ion thrusters, aerobraking and slingshots marked), and the totals."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.etree.ElementTree import Element

from pictures.svg import INK, LINE, MUTED, Drawing, message

ROCKETS = {
    "juno": "#3a86c8",
    "atlas": "#37a34a",
    "soyuz": "#e0413a",
    "proton": "#f08c2e",
    "saturn": "#8f45c7",
    "ion": "#1fb5b5",
}
STEP, TOP, NODE_X = 64, 70, 40


def plan(result: Mapping[str, Any]) -> str:
    steps = [s for s in result.get("plan") or [] if isinstance(s, Mapping)]
    if result.get("status") not in (None, "optimal") or not steps:
        return message(
            f"no plan: {result.get('message') or result.get('status') or 'nothing to draw'}",
            "leaving-earth",
            width=640,
        )
    totals = ", ".join(f"{k} {result[k]}" for k in ("cost", "time", "mass") if result.get(k) is not None)
    title = f"Mission plan: {len(steps)} maneuvers" + (f" ({totals})" if totals else "")
    drawing = Drawing(720, TOP + len(steps) * STEP + 40, title, "leaving-earth")
    drawing.text(16, 24, title, font_size=14, font_weight="bold")
    drawing.text(16, 44, "rockets carried: " + _components(result.get("components") or {}), fill=MUTED)
    route = drawing.group(class_="route")
    drawing.add(
        "line", route, x1=NODE_X, y1=TOP, x2=NODE_X, y2=TOP + len(steps) * STEP, stroke=LINE, stroke_width=4
    )
    for i, step in enumerate(steps):
        _place(drawing, route, TOP + i * STEP, str(step.get("origin", "?")))
        _maneuver(drawing, i, step, TOP + i * STEP + STEP / 2)
    _place(drawing, route, TOP + len(steps) * STEP, str(steps[-1].get("destination", "?")))
    return drawing.to_string()


def _components(components: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} × {count}" for name, count in components.items()) or "none"


def _years(count: Any) -> str:
    return f"{count} year" if count == 1 else f"{count} years"


def _place(drawing: Drawing, route: Element, y: float, name: str) -> None:
    place = drawing.group(name, route, class_="place")
    drawing.add("circle", place, cx=NODE_X, cy=y, r=9, fill="#ffffff", stroke=INK, stroke_width=2)
    drawing.text(NODE_X + 18, y + 5, name, place, font_size=13, font_weight="bold")


def _maneuver(drawing: Drawing, i: int, step: Mapping[str, Any], y: float) -> None:
    fired = step.get("components") or {}
    flags = [w for w in ("aerobraking", "slingshot", "faster") if step.get(w)]
    years = step.get("time")
    about = f"difficulty {step.get('difficulty', '?')}" + (f", {_years(years)}" if years else "")
    if step.get("year"):
        about += f", year {step['year']}"
    group = drawing.group(
        f"maneuver {i + 1}: {about}; fires {_components(fired)}", class_="maneuver", data_step=i + 1
    )
    drawing.text(
        NODE_X + 18,
        y + 4,
        f"{about}" + (f" · {', '.join(flags)}" if flags else ""),
        group,
        font_size=11,
        fill=MUTED,
    )
    x = 330
    for name, count in fired.items():
        for _ in range(int(count)):
            _rocket(drawing, group, x, y, name)
            x += 26
        drawing.text(x + 2, y + 5, f"{name} × {count}", group, font_size=11)
        x += 14 + 8 * len(f"{name} × {count}")
    if step.get("thrust") is not None:
        drawing.text(
            700, y + 5, f"thrust {step['thrust']}", group, font_size=10, fill=MUTED, text_anchor="end"
        )


def _rocket(drawing: Drawing, group: Element, x: float, y: float, name: str) -> None:
    """A small rocket: body, nose and fins in the rocket's colour."""
    colour = ROCKETS.get(name, "#888888")
    drawing.add(
        "path",
        group,
        d=f"M{x + 10} {y - 14} L{x + 15} {y - 6} L{x + 15} {y + 8} L{x + 5} {y + 8} L{x + 5} {y - 6} Z",
        fill=colour,
        class_=f"rocket rocket-{name}",
    )
    drawing.add(
        "path",
        group,
        d=f"M{x + 5} {y + 2} L{x} {y + 12} L{x + 5} {y + 8} Z M{x + 15} {y + 2} "
        f"L{x + 20} {y + 12} L{x + 15} {y + 8} Z",
        fill=INK,
    )
