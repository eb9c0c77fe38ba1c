"""Slices: a shard over a range of games hands the rest on after the host's slice, and the pieces add up
to exactly the unsliced shard."""

from __future__ import annotations

import time

from kinds import KINDS
from puzzles.mastermind import games
from puzzles.runtime import Run
from puzzles.sharding import over_range


def test_without_a_slice_a_range_runs_to_its_end() -> None:
    with Run() as run:
        assert over_range("3:7", run, lambda i: i * i) == ([9, 16, 25, 36], None)


def test_a_used_up_slice_hands_on_the_rest_and_the_pieces_cover_the_range_once() -> None:
    def slow_square(index: int) -> int:
        time.sleep(0.02)
        return index * index

    done, keys = {}, ["0:10"]
    with Run(slice_seconds=0.05) as run:
        while keys:
            key = keys.pop(0)
            piece, rest = over_range(key, run, slow_square)
            assert piece, "each piece does at least one index"
            start = int(key.split(":")[0])
            done.update(zip(range(start, start + len(piece)), piece, strict=True))
            keys += rest or []
    assert sorted(done.items()) == [(i, i * i) for i in range(10)], "every index once"


def test_the_rest_is_cut_into_pieces_of_a_slices_worth_that_can_run_side_by_side() -> None:
    with Run(slice_seconds=0) as run:  # a slice is used up after one index
        assert over_range("2:6", run, lambda i: i) == ([2], ["3:4", "4:5", "5:6"])


def test_mastermind_games_played_in_slices_are_the_games_played_at_once() -> None:
    params = KINDS["mastermind.play"].load_params({"n": 3, "k": 4, "secrets": {"sample": 6, "seed": 1}})
    with Run() as run:
        whole = games.run_shard(params, "0:6", run)
    assert whole.rest is None
    pieces, keys = [], ["0:6"]
    with Run(slice_seconds=0) as run:  # every game its own slice
        while keys:
            result = games.run_shard(params, keys.pop(0), run)
            pieces += result.summary["games"]
            keys += result.rest or []
    strip = [{k: v for k, v in game.items() if k != "seconds"} for game in pieces]
    assert strip == [{k: v for k, v in game.items() if k != "seconds"} for game in whole.summary["games"]]
    assert len(pieces) == 6


def test_a_process_keeps_the_guesses_z3_had_no_part_in_and_only_those() -> None:
    """The guesses numpy works out (4×6, `best`) serve the next shard of the process; those Z3 picked
    (`consistent`: a model of the constraints) depend on their context, and stay with their shard."""
    for strategy, shared in (("best", True), ("consistent", False)):
        params = KINDS["mastermind.play"].load_params(
            {"n": 4, "k": 6, "strategy": strategy, "secrets": {"sample": 4, "seed": 2}}
        )
        games._MEMOS.clear()
        with Run() as run:
            first = games.run_shard(params, "0:4", run)
        kept = dict(games._MEMOS[(4, 6, strategy, 0, params.get("samples") or games.DEFAULT_SAMPLES)])
        assert bool(kept) is shared, strategy
        with Run() as run:
            again = games.run_shard(params, "0:4", run)
        strip = [[g["guesses"] for g in result.summary["games"]] for result in (first, again)]
        assert strip[0] == strip[1], "the same games either way"
