import itertools
import threading
import time

import pytest

from puzzles.dice import beats_pairs, solve, win_count
from puzzles.runtime import Cancelled, Run, TimeLimitExceeded

RPSLS = [[0, 2], [0, 3], [1, 0], [1, 4], [2, 1], [2, 3], [3, 1], [3, 4], [4, 2], [4, 0]]


def assert_valid(result: dict, dice: int, faces: int, beats) -> None:
    """Check the answer independently of Z3: sorted faces, no ties, every winner wins exactly `wins`."""
    found = result["dice"]
    assert len(found) == dice and all(len(die) == faces for die in found)
    assert all(die == sorted(die) for die in found)
    for a, b in itertools.combinations(range(dice), 2):
        assert not set(found[a]) & set(found[b]), "faces of different dice tie"
    for winner, loser in beats_pairs(dice, beats):
        assert win_count(found[winner], found[loser]) == result["wins"]


def test_three_six_sided_dice_win_21_of_36_and_that_is_optimal() -> None:
    with Run(60) as run:
        result = solve({"dice": 3, "faces": 6, "beats": "cycle"}, run)
    assert (result["status"], result["wins"], result["out_of"], result["optimal"]) == ("sat", 21, 36, True)
    assert_valid(result, 3, 6, "cycle")


@pytest.mark.slow
def test_rock_paper_scissors_lizard_spock_dice_win_20_of_36_and_that_is_optimal() -> None:
    with Run(120) as run:
        result = solve({"dice": 5, "faces": 6, "beats": RPSLS}, run)
    assert (result["wins"], result["optimal"]) == (20, True)
    assert_valid(result, 5, 6, RPSLS)


def test_max_face_bounds_every_face() -> None:
    with Run(60) as run:
        result = solve({"dice": 3, "faces": 4, "max_face": 8, "beats": "cycle"}, run)
    assert result["status"] == "sat"
    assert max(max(die) for die in result["dice"]) <= 8
    assert_valid(result, 3, 4, "cycle")


def test_contradictory_relation_is_unsat_not_an_error() -> None:
    with Run(60) as run:
        result = solve({"dice": 2, "faces": 3, "beats": [[0, 1], [1, 0]]}, run)
    assert result == {"status": "unsat", "dice": None, "wins": None, "out_of": 9, "optimal": True}


@pytest.mark.slow
def test_time_limit_returns_best_so_far_without_optimality() -> None:
    started = time.monotonic()
    # 3 × 15: a first answer in ~0.3 s, no optimality proof within 20 s (3 × 20 needs ~2 s for a first one);
    # 5 s, not 2: on a machine loaded by other work the first answer took over 2 s
    with Run(5) as run:
        result = solve({"dice": 3, "faces": 15, "beats": "cycle"}, run)
    assert time.monotonic() - started < 10
    assert result["status"] == "sat" and result["optimal"] is False
    assert_valid(result, 3, 15, "cycle")


def test_a_time_limit_before_any_dice_says_none_were_found() -> None:
    """6 dice of 12 faces find no first answer within a tenth of a second: the failure says so, rather
    than leaving the promised best-so-far unexplained."""
    with Run(0.1) as run, pytest.raises(TimeLimitExceeded, match="before any dice were found"):
        solve({"dice": 6, "faces": 12, "beats": "cycle"}, run)


def test_cancel_from_another_thread_interrupts_a_running_check() -> None:
    progress = []
    with Run(120, on_progress=progress.append) as run:
        threading.Timer(1.0, run.stop).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            solve({"dice": 3, "faces": 20, "beats": "cycle"}, run)
    assert time.monotonic() - started < 3
