"""Every kind's picture is well-formed SVG whose content is the result's: parsed back with an XML parser,
never compared as text. Pure: params and results in, SVG out (no database, no worker)."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pytest

from kinds import KINDS
from pictures import planetx
from pictures.dice import wins
from tests.support import ROOT

NS = {"svg": "http://www.w3.org/2000/svg"}
TAIJI = {p["id"]: p for p in json.loads((ROOT / "bench" / "taiji_examples.json").read_text())["puzzles"]}


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert not root.findall(".//svg:script", NS) and "style=" not in svg  # keeps to the dashboard's CSP
    return root


def titles(root: ET.Element) -> list[str]:
    return [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]


def draw(kind: str, params: dict, result: dict) -> ET.Element:
    return parse(KINDS[kind].draw(KINDS[kind].load_params(params), result))


def lit_tiles(root: ET.Element) -> dict[tuple[int, int], int]:
    return {
        (int(g.get("data-row")), int(g.get("data-col"))): int(g.get("data-lit"))
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if g.get("data-lit") is not None
    }


@pytest.mark.parametrize("puzzle_id", ["SOLV0", "SOLV33", "SOLV96", "SOLV72"])
def test_a_taiji_picture_lights_the_solutions_tiles(puzzle_id: str) -> None:
    """Dice, flowers, diamonds and holes from real puzzles, lit as their known solution says."""
    puzzle = TAIJI[puzzle_id]
    solution = puzzle["solution"]
    root = draw("taiji.solve", {"code": puzzle["code"]}, {"status": "solved", "solution": solution})
    expected = {(r, c): v for r, row in enumerate(solution) for c, v in enumerate(row) if v is not None}
    assert lit_tiles(root) == expected
    holes = [g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("class") == "tile hole"]
    assert len(holes) == sum(v is None for row in solution for v in row)
    classes = {e.get("class") for e in root.iter()}
    for feature, mark in (("dice", "pip"), ("flower", "petal"), ("diamond", "diamond")):
        assert (mark in classes) == (feature in puzzle["features"]), feature


def test_a_taiji_grid_shows_joins_fixed_tiles_and_escapes_nothing_it_should_not() -> None:
    grid = [
        [{"symbol": "dice", "value": -2, "colour": "r"}, {"join_left": True}, None],
        [{"fixed": True, "lit": True}, {"join_up": True, "symbol": "flower", "value": 3}, {}],
    ]
    root = draw("taiji.solve", {"grid": grid}, {"status": "unsat", "solution": None})
    assert lit_tiles(root) == {(0, 0): 0, (0, 1): 0, (1, 0): 1, (1, 1): 0, (1, 2): 0}, "only the fixed lit"
    assert len([e for e in root.iter() if e.get("class") == "join"]) == 2
    text = " ".join(titles(root))
    assert "red die -2" in text and "flower with 3 yellow petals" in text and "(fixed)" in text
    assert "no solution (unsat)" in titles(root)[0]


def test_a_deduction_picture_holds_each_sectors_probabilities() -> None:
    result = {
        "status": "ok",
        "boards": 3,
        "sectors": [
            {
                "sector": s,
                "probabilities": {"comet": 1.0 if s == 2 else 0.0, "planet_x": 0.5 if s in (5, 6) else 0},
            }
            for s in range(1, 13)
        ],
        "planet_x": [{"sector": 5, "probability": 0.5}, {"sector": 6, "probability": 0.5}],
    }
    root = parse(planetx.board(result))
    odds = {
        (int(sector.get("data-sector")), band.get("data-object")): float(band.get("data-p"))
        for sector in root.iter("{http://www.w3.org/2000/svg}g")
        if sector.get("data-sector")
        for band in sector
        if band.get("data-object")
    }
    assert len(odds) == 12 * len(planetx.OBJECTS)
    assert odds[(2, "comet")] == 1.0 and odds[(3, "comet")] == 0.0 and odds[(5, "planet_x")] == 0.5
    candidates = [g.get("data-sector") for g in root.iter() if g.get("class") == "sector candidate"]
    assert candidates == ["5", "6"]
    assert "sector 2 · comet 100.0%" in titles(root)


def test_an_enumeration_picture_turns_counts_into_probabilities() -> None:
    result = {
        "count": 4,
        "sectors": [{"sector": s, "counts": {"asteroid": 1, "empty": 3}} for s in range(1, 19)],
    }
    root = parse(KINDS["planetx.enumerate"].draw({"mode": "expert"}, result))
    assert "sector 18 · asteroid 25.0%" in titles(root) and "sector 1 · empty 75.0%" in titles(root)


def test_a_contradiction_and_a_simulation_are_drawn_too() -> None:
    contradiction = parse(planetx.board({"status": "contradiction", "message": "no board <fits>"}))
    assert "no board <fits>" in titles(contradiction)[0]
    simulation = parse(KINDS["planetx.simulate"].draw({}, {"games": 3, "days_histogram": {"12": 2, "9": 1}}))
    assert [t for t in titles(simulation) if t.startswith("days")] == [
        "days to locate Planet X 9: 1",
        "days to locate Planet X 10: 0",
        "days to locate Planet X 11: 0",
        "days to locate Planet X 12: 2",
    ]


@pytest.mark.parametrize(
    ("kind", "params", "result"),
    [
        ("planetx.simulate", {}, {"games": 4, "days_histogram": {"20": 1, "14": 2, "17": 1}}),
        ("mastermind.play", {"n": 4, "k": 6}, {"games_count": 3, "turn_histogram": {"3": 1, "7": 2}}),
    ],
)
def test_a_histograms_axis_is_evenly_spaced_empty_bins_included(
    kind: str, params: dict, result: dict
) -> None:
    root = parse(KINDS[kind].draw(params, result))
    bars = [g for g in root.iter() if g.get("class") == "bar"]
    xs = [float(g.find("svg:rect", NS).get("x")) for g in bars]
    steps = [b - a for a, b in zip(xs, xs[1:], strict=False)]
    assert len(bars) > len(next(v for k, v in result.items() if k.endswith("histogram")))
    assert max(steps) - min(steps) < 0.05, xs  # rounded to hundredths


def test_a_mastermind_picture_has_a_row_of_pegs_per_guess_and_its_feedback() -> None:
    params = {"n": 4, "k": 6, "history": [{"guess": [0, 0, 1, 1], "black": 1, "white": 2}]}
    root = draw("mastermind.guess", params, {"status": "ok", "guess": [2, 3, 1, 4], "remaining": 12})
    turns = [g for g in root.iter() if g.get("class") == "turn"]
    assert len(turns) == 1
    pegs = [int(c.get("data-colour")) for c in turns[0].iter() if c.get("class") == "peg"]
    keys = [c.get("class") for c in turns[0].iter() if (c.get("class") or "").startswith("key")]
    assert pegs == [0, 0, 1, 1] and keys == ["key black", "key white", "key white", "key empty"]
    (guess,) = [g for g in root.iter() if g.get("class") == "next-guess"]
    assert [int(c.get("data-colour")) for c in guess.iter() if c.get("class") == "peg"] == [2, 3, 1, 4]


def test_a_leaving_earth_picture_follows_the_route_with_its_rockets() -> None:
    result = {
        "status": "optimal",
        "cost": 21,
        "components": {"soyuz": 1, "juno": 2},
        "plan": [
            {"origin": "Earth", "destination": "Earth orbit", "difficulty": 8, "components": {"soyuz": 1}},
            {"origin": "Earth orbit", "destination": "<Moon>", "difficulty": 3, "components": {"juno": 2}},
        ],
    }
    root = draw("leaving_earth.plan", {"origin": "E", "destination": "L"}, result)
    places = [g.find("svg:title", NS).text for g in root.iter() if g.get("class") == "place"]
    assert places == ["Earth", "Earth orbit", "<Moon>"]
    rockets = [
        [e.get("class") for e in g.iter() if "rocket" in (e.get("class") or "")]
        for g in root.iter()
        if g.get("class") == "maneuver"
    ]
    assert rockets == [["rocket rocket-soyuz"], ["rocket rocket-juno", "rocket rocket-juno"]]
    years = [
        {"origin": "Earth orbit", "destination": "Venus orbit", "difficulty": 3, "time": t} for t in (1, 2)
    ]
    timed = draw("leaving_earth.plan", {"origin": "Eo", "destination": "Vo"}, {**result, "plan": years})
    assert [t for t in titles(timed) if t.startswith("maneuver")] == [
        "maneuver 1: difficulty 3, 1 year; fires none",
        "maneuver 2: difficulty 3, 2 years; fires none",
    ]
    infeasible = parse(KINDS["leaving_earth.plan"].draw({}, {"status": "infeasible", "message": "too far"}))
    assert "too far" in titles(infeasible)[0]


def test_a_dice_picture_has_the_win_matrix() -> None:
    dice = [[1, 4, 6, 6, 6, 6], [3, 5, 5, 5, 5, 8], [2, 2, 2, 7, 7, 7]]
    root = draw("dice", {"dice": 3, "faces": 6}, {"status": "sat", "dice": dice, "wins": 21, "out_of": 36})
    cells = {
        (int(g.get("data-row")), int(g.get("data-col"))): int(g.get("data-wins"))
        for g in root.iter()
        if g.get("class") == "cell"
    }
    assert cells == {(i, j): wins(dice[i], dice[j]) for i in range(3) for j in range(3) if i != j}
    assert cells[(0, 1)] == cells[(1, 2)] == cells[(2, 0)] == 21


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_draws_a_picture(name: str) -> None:
    assert KINDS[name].picture is not None
