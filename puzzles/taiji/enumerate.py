"""Every solution of a Taiji puzzle, or of a designer's draft: how far it is from a unique solution.

The solver's encoding (puzzles.taiji.solver.Encoding) already counts a lighting and its full flip as one
when no tile is fixed; each solution found is blocked and the search goes on, up to `max_solutions`. At
the cap one more check says whether there are more ("at least N"). A time limit ends the search with what
it found, also as "at least N". Each solution is handed over as a row: its number in the order found
(the key) and its rendering as JSON (the payload).
"""

from __future__ import annotations

import json
import time
from typing import Any

import z3

from puzzles.runtime import Run, TimeLimitExceeded
from puzzles.taiji.code import puzzle_from_params
from puzzles.taiji.rules import is_valid
from puzzles.taiji.solver import Encoding, Solution, render

#: rows handed over at a time (a run's rows are stored with its result)
ROWS_PER_BATCH = 200


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    with run.interruptible():
        return _enumerate(params, run)


def _enumerate(params: dict[str, Any], run: Run) -> dict[str, Any]:
    started = time.perf_counter()
    puzzle = puzzle_from_params(params)
    cap = params["max_solutions"]
    encoding = Encoding(puzzle, run.context(), run.raise_if_stopped)
    found: list[Solution] = []
    batch: list[tuple[int, bytes]] = []
    ended = "complete"
    try:
        # an interrupt that lands outside a check (while a solution is read or blocked) is the run's stop
        # too: what was found is kept either way
        with run.interruptible():
            while run.check(encoding.solver) == z3.sat:
                if len(found) == cap:
                    ended = "cap"
                    break
                solution = encoding.solution()
                batch.append((len(found), json.dumps(render(solution)).encode()))
                found.append(solution)
                encoding.exclude(solution)
                if len(batch) == ROWS_PER_BATCH:
                    run.rows(batch)
                    batch = []
                    run.progress(solutions=len(found))
    except TimeLimitExceeded:
        ended = "time limit"
    run.rows(batch)
    return _result(puzzle, found, ended, time.perf_counter() - started)


def _result(puzzle: Any, found: list[Solution], ended: str, seconds: float) -> dict[str, Any]:
    count, complete = len(found), ended == "complete"
    if complete:
        summary = {0: "no solution", 1: "a unique solution"}.get(count, f"exactly {count} solutions")
    else:
        why = "max_solutions was reached" if ended == "cap" else "the time limit ran out"
        summary = f"at least {count} solution{'s' * (count != 1)} ({why})"
    return {
        "count": count,
        "complete": complete,
        "at_least": None if complete else count,
        "ended": ended,
        "summary": summary,
        # at the cap one more solution was found: there are more than `count`
        "unique": count == 1 if complete else (False if count > 1 or ended == "cap" else None),
        "up_to_flip": not puzzle.has_fixed,
        "undecided": _undecided(found),
        "first_solution": found[0] if found else None,
        "valid": all(is_valid(puzzle, solution) for solution in found),
        "width": puzzle.width,
        "height": puzzle.height,
        "seconds": round(seconds, 3),
    }


def _undecided(found: list[Solution]) -> list[list[int]]:
    """[row, column] of every tile the solutions found do not agree on: where a designer's draft needs
    another clue. Empty with fewer than two solutions."""
    if len(found) < 2:
        return []
    first = found[0]
    return [
        [r, c]
        for r, row in enumerate(first)
        for c, value in enumerate(row)
        if value is not None and any(other[r][c] != value for other in found[1:])
    ]
