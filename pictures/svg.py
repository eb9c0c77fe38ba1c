"""A small SVG builder on xml.etree: the serializer escapes every attribute and text, so names that come
from a job's params can never inject markup. Presentation attributes only (no `style`), so a picture put
inline in the dashboard keeps to its Content-Security-Policy."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any
from xml.etree import ElementTree as ET

SVG_NS = "http://www.w3.org/2000/svg"
FONT = "system-ui, -apple-system, Segoe UI, sans-serif"
INK = "#1d2330"
MUTED = "#6b7385"
LINE = "#d9dde6"


def _value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


class Drawing:
    """An SVG document of a fixed size with a <title> (what a screen reader and a tooltip say)."""

    def __init__(self, width: float, height: float, title: str, kind: str) -> None:
        self.root = ET.Element(
            "svg",
            {
                "xmlns": SVG_NS,
                "width": _value(width),
                "height": _value(height),
                "viewBox": f"0 0 {_value(width)} {_value(height)}",
                "role": "img",
                "class": f"picture picture-{kind}",
                "font-family": FONT,
            },
        )
        ET.SubElement(self.root, "title").text = title
        self.add("rect", x=0, y=0, width=width, height=height, fill="#ffffff")

    def add(self, tag: str, parent: ET.Element | None = None, **attributes: object) -> ET.Element:
        """An element; attribute names use `_` for `-` (stroke_width), `class_` for class."""
        element = ET.SubElement(parent if parent is not None else self.root, tag)
        for name, value in attributes.items():
            if value is not None:
                element.set(name.rstrip("_").replace("_", "-"), _value(value))
        return element

    def text(
        self, x: float, y: float, content: object, parent: ET.Element | None = None, **attributes: object
    ) -> ET.Element:
        attributes.setdefault("font_size", 12)
        attributes.setdefault("fill", INK)
        element = self.add("text", parent, x=x, y=y, **attributes)
        element.text = str(content)
        return element

    def group(
        self, tooltip: str | None = None, parent: ET.Element | None = None, **attributes: object
    ) -> ET.Element:
        """A <g>; its tooltip is a <title> child (shown on hover, read by screen readers)."""
        element = self.add("g", parent, **attributes)
        if tooltip:
            ET.SubElement(element, "title").text = tooltip
        return element

    def to_string(self) -> str:
        return ET.tostring(self.root, encoding="unicode")


def message(text: str, kind: str, width: int = 480, height: int = 80) -> str:
    """A picture that only says something (a result with nothing to draw, e.g. no solution)."""
    drawing = Drawing(width, height, text, kind)
    drawing.text(16, height / 2 + 5, text, font_size=15, fill=MUTED)
    return drawing.to_string()


def percent(p: float) -> str:
    """0.4678 → '46.8%'; tiny non-zero odds stay visible ('<0.1%')."""
    if p <= 0:
        return "0%"
    if p < 0.001:
        return "<0.1%"
    return f"{100 * p:.1f}%"


def polar(cx: float, cy: float, r: float, angle: float) -> tuple[float, float]:
    """A point at `angle` degrees clockwise from twelve o'clock."""
    rad = math.radians(angle - 90)
    return cx + r * math.cos(rad), cy + r * math.sin(rad)


def band_path(cx: float, cy: float, r0: float, r1: float, a0: float, a1: float) -> str:
    """An annular sector: between radii r0 < r1, from angle a0 to a1 (clockwise, < 180°)."""
    points = [polar(cx, cy, r, a) for r, a in ((r0, a0), (r1, a0), (r1, a1), (r0, a1))]
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = ((_value(round(x, 2)), _value(round(y, 2))) for x, y in points)
    return (
        f"M{x0} {y0} L{x1} {y1} A{_value(r1)} {_value(r1)} 0 0 1 {x2} {y2} "
        f"L{x3} {y3} A{_value(r0)} {_value(r0)} 0 0 0 {x0} {y0} Z"
    )


def histogram_bars(histogram: Mapping[str, Any]) -> list[tuple[str, int]]:
    """A histogram keyed by whole numbers ({"12": 3, "15": 1}) as one bar per number from the smallest to
    the largest, the empty ones 0: an evenly spaced axis (12, 13, 14, 15), not one that skips."""
    counts = {int(key): int(value) for key, value in histogram.items()}
    if not counts:
        return []
    return [(str(at), counts.get(at, 0)) for at in range(min(counts), max(counts) + 1)]


def bar_chart(
    drawing: Drawing,
    x: float,
    y: float,
    width: float,
    height: float,
    bars: Sequence[tuple[str, float]],
    label: str,
) -> None:
    """Vertical bars (label, value) scaled to the largest, each with a tooltip; `label` names the x axis."""
    peak = max((v for _, v in bars), default=0) or 1
    step = width / max(1, len(bars))
    chart = drawing.group(class_="bars")
    drawing.add("line", chart, x1=x, y1=y + height, x2=x + width, y2=y + height, stroke=LINE)
    every = max(1, math.ceil(len(bars) / 24))  # at most ~24 axis labels
    for i, (name, value) in enumerate(bars):
        h = height * value / peak
        bar = drawing.group(f"{label} {name}: {_value(value)}", chart, class_="bar")
        drawing.add(
            "rect",
            bar,
            x=round(x + i * step + step * 0.1, 2),
            y=round(y + height - h, 2),
            width=round(step * 0.8, 2),
            height=round(h, 2),
            fill="#2f5fd0",
        )
        if i % every == 0:
            drawing.text(
                x + i * step + step / 2, y + height + 14, name, chart, font_size=10, text_anchor="middle"
            )
    drawing.text(x + width / 2, y + height + 30, label, chart, font_size=11, fill=MUTED, text_anchor="middle")
    drawing.text(x - 6, y + 10, _value(peak), chart, font_size=10, fill=MUTED, text_anchor="end")
