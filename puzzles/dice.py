"""Intransitive dice: find dice where each winner beats its loser in the same, largest, number of rolls.

Each die has `faces` integer faces in 1..max_face, sorted ascending. Faces of different dice never tie, so
every roll of two dice has a winner. Every pair in `beats` must win exactly `wins` of the faces² rolls,
and `wins` is pushed up until no larger value is satisfiable, which proves the answer optimal.
"""

from __future__ import annotations

import itertools
from typing import Any, Literal

import z3

from core.errors import StopReason
from puzzles.runtime import Run, Stopped, TimeLimitExceeded


def beats_pairs(dice: int, beats: Literal["cycle"] | list[list[int]]) -> list[tuple[int, int]]:
    """The dominance relation as (winner, loser) pairs; `"cycle"` means each die beats the next."""
    if beats == "cycle":
        return [(i, (i + 1) % dice) for i in range(dice)]
    return [(int(w), int(loser)) for w, loser in beats]


def win_count(winner: list[int], loser: list[int]) -> int:
    """How many of the len(winner) × len(loser) rolls `winner` wins."""
    return sum(1 for a in winner for b in loser if a > b)


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    dice, faces = params["dice"], params["faces"]
    max_face = params.get("max_face") or dice * faces
    pairs = beats_pairs(dice, params.get("beats", "cycle"))
    out_of = faces * faces

    ctx = run.context()
    solver = z3.SolverFor("QF_LIA", ctx=ctx)
    grid = [[z3.Int(f"d{i}_{j}", ctx) for j in range(faces)] for i in range(dice)]
    for row in grid:
        solver.add(*(z3.And(v >= 1, v <= max_face) for v in row))
        solver.add(*(a <= b for a, b in itertools.pairwise(row)))
    for a, b in itertools.combinations(range(dice), 2):
        solver.add(*(x != y for x in grid[a] for y in grid[b]))
    wins = z3.Int("wins", ctx)
    for w, loser in pairs:
        solver.add(z3.Sum([z3.If(x > y, 1, 0) for x in grid[w] for y in grid[loser]]) == wins)
    # a winner must win more than half of the rolls, since none of them tie
    solver.add(wins > out_of // 2)

    best: tuple[int, list[list[int]]] | None = None
    optimal = False
    try:
        while run.check(solver) == z3.sat:
            model = solver.model()
            best = (model[wins].as_long(), [[model[v].as_long() for v in row] for row in grid])
            run.progress(phase="improving", wins=best[0], out_of=out_of)
            solver.add(wins > best[0])
        optimal = True
    except Stopped as stopped:
        # a time limit after a first solution still answers, just without the optimality proof
        if run.stop_reason != StopReason.TIMEOUT:
            raise
        if best is None:
            found_none = f"{stopped} before any dice were found: give it a longer time_limit"
            raise TimeLimitExceeded(found_none) from None

    if best is None:
        return {"status": "unsat", "dice": None, "wins": None, "out_of": out_of, "optimal": True}
    return {"status": "sat", "dice": best[1], "wins": best[0], "out_of": out_of, "optimal": optimal}
