"""taiji.enumerate in-process: every solution, checked against brute force; the cap and the time limit
end the search with a clear "at least N"."""

from __future__ import annotations

import json
import random

import pytest

from core.errors import StopReason
from kinds import KINDS
from puzzles.runtime import Run
from puzzles.taiji.code import to_grid
from puzzles.taiji.enumerate import ROWS_PER_BATCH, solve
from puzzles.taiji.solver import render
from tests.puzzles.test_taiji import BY_ID, every_solution, random_puzzle

ENUMERATE = KINDS["taiji.enumerate"]


def enumerated(params: dict, time_limit: float = 60) -> tuple[dict, list]:
    rows: list = []
    with Run(time_limit, on_rows=rows.extend) as run:
        result = solve(ENUMERATE.load_params(params), run)
    return result, rows


def flip(grid: list) -> list:
    return [[None if v is None else 1 - v for v in row] for row in grid]


@pytest.mark.slow
def test_every_solution_up_to_a_flip_agrees_with_brute_force_on_random_puzzles() -> None:
    rng = random.Random(7)
    for _ in range(60):
        puzzle = random_puzzle(rng)
        brute = every_solution(puzzle)
        result, rows = enumerated({"grid": to_grid(puzzle)})
        stored = [json.loads(payload) for _, payload in rows]
        assert [key for key, _ in rows] == list(range(len(rows)))
        assert result["complete"] and result["count"] == len(rows) and result["valid"]
        assert all(solution in [render(g) for g in brute] for solution in stored), puzzle
        pairs = not puzzle.has_fixed and any(tile is not None for tile in puzzle.tiles)
        if pairs:  # each class of a solution and its full flip once
            classes = {min(json.dumps(render(g)), json.dumps(render(flip(g)))) for g in brute}
            assert len(stored) == len(classes), puzzle
        else:
            assert sorted(map(json.dumps, stored)) == sorted(json.dumps(render(g)) for g in brute), puzzle
        assert result["unique"] is (len(stored) == 1)


def test_a_unique_puzzle_has_one_solution_and_no_undecided_tile() -> None:
    result, rows = enumerated({"code": BY_ID["SOLV0"][1]})
    assert (result["count"], result["complete"], result["unique"], result["undecided"]) == (1, True, True, [])
    assert result["summary"] == "a unique solution" and result["at_least"] is None and len(rows) == 1


def test_the_cap_says_at_least_and_names_the_tiles_left_open() -> None:
    """A blank 3x2 draft: 2^6 lightings, 32 up to a flip; capped at 5 the answer is 'at least 5'."""
    draft = {"grid": [[{}, {}, {}], [{}, {}, {}]]}
    result, rows = enumerated({**draft, "max_solutions": 5})
    assert (result["count"], result["complete"], result["at_least"], result["ended"]) == (5, False, 5, "cap")
    assert result["summary"] == "at least 5 solutions (max_solutions was reached)" and len(rows) == 5
    assert result["unique"] is False and result["undecided"]
    one, _ = enumerated({**draft, "max_solutions": 1})
    assert (one["count"], one["ended"], one["unique"]) == (1, "cap", False), "one more exists: not unique"
    whole, rows = enumerated(draft)
    assert (whole["count"], whole["complete"], whole["summary"]) == (32, True, "exactly 32 solutions")
    assert len({payload for _, payload in rows}) == 32
    assert sorted(map(tuple, whole["undecided"])) == [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]


def test_exactly_the_cap_is_complete() -> None:
    """As many solutions as the cap: one more check finds none, so the count is exact."""
    result, _ = enumerated({"grid": [[{}, {}, {}], [{}, {}, {}]], "max_solutions": 32})
    assert (result["count"], result["complete"], result["ended"]) == (32, True, "complete")


def test_a_time_limit_keeps_what_was_found() -> None:
    """The run's time runs out once the first batch of rows is handed over (as the watchdog would stop it,
    without depending on how fast this machine is): the search ends with what it found, 'at least N'."""
    rows: list = []
    with Run(60, on_rows=lambda batch: (rows.extend(batch), run.stop(StopReason.TIMEOUT))) as run:
        draft = {"grid": [[{}] * 5 for _ in range(5)], "max_solutions": 10**5}  # 2^24 solutions
        result = solve(ENUMERATE.load_params(draft), run)
    assert result["ended"] == "time limit" and not result["complete"]
    assert result["count"] == len(rows) == result["at_least"] >= ROWS_PER_BATCH
    assert result["summary"].startswith(f"at least {result['count']} solutions (the time limit ran out)")


def test_rows_render_as_one_line_each() -> None:
    _, rows = enumerated({"grid": [[{"fixed": True, "lit": True}, {}], [None, {}]]})
    lines = sorted(ENUMERATE.render_row({}, key, payload) for key, payload in rows)
    assert lines == ["##/ #", "##/ .", "#./ #", "#./ ."]
