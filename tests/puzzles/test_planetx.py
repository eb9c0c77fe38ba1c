"""Planet X rules: the Z3 enumeration against an independent plain-Python enumerator and checker."""

import random
from collections import Counter

import numpy as np
import pytest

from puzzles.planetx import enumerate as planetx
from puzzles.planetx.board import (
    ASTEROID,
    COMET,
    GAS_CLOUD,
    LETTERS,
    MODES,
    decode,
    encode,
    from_letters,
    to_letters,
)
from puzzles.planetx.rules import enumerate_boards, is_valid
from puzzles.planetx.solver import enumerate_shard
from puzzles.runtime import Cancelled, Run

STANDARD = MODES["standard"]


@pytest.fixture(scope="module")
def standard_boards() -> list[int]:
    return enumerate_boards(STANDARD)


def test_encoding_round_trips() -> None:
    letters = "ACCDAADDAEGX"[:12]
    code = from_letters(letters)
    assert to_letters(code, 12) == letters
    assert decode(code, 12) == ["EXGDAC".index(ch) for ch in letters]
    assert encode(decode(code, 12)) == code
    assert code & 7 == ASTEROID  # sector 1 in the lowest bits


@pytest.mark.slow
def test_standard_has_4446_boards_by_both_methods(standard_boards: list[int]) -> None:
    with Run(120) as run:
        z3_boards = enumerate_shard(STANDARD, [], run).codes
    assert len(standard_boards) == len(set(standard_boards)) == 4446
    assert sorted(z3_boards) == sorted(standard_boards)


@pytest.mark.slow
def test_every_enumerated_board_obeys_the_rules(standard_boards: list[int]) -> None:
    assert all(is_valid(STANDARD, decode(code, 12)) for code in standard_boards)
    expert = MODES["expert"]
    with Run(120) as run:
        shard = enumerate_shard(expert, [ASTEROID, ASTEROID, 2], run).codes
    assert shard and all(is_valid(expert, decode(code, 18)) for code in shard)
    assert sorted(shard) == sorted(enumerate_boards(expert, prefix=[ASTEROID, ASTEROID, 2]))


def test_the_checker_rejects_broken_boards(standard_boards: list[int]) -> None:
    rng = random.Random(7)
    for code in rng.sample(standard_boards, 200):
        board = decode(code, 12)
        i, j = rng.sample(range(12), 2)
        board[i], board[j] = board[j], board[i]
        assert is_valid(STANDARD, board) == (encode(board) in set(standard_boards))
    comet_on_one = [COMET] + decode(standard_boards[0], 12)[1:]
    assert not is_valid(STANDARD, comet_on_one)


def test_plan_keeps_exactly_the_prefixes_boards_start_with(standard_boards: list[int]) -> None:
    for depth in (1, 2, 3):
        with Run(60) as run:
            keys = planetx.plan({"mode": "standard", "shard_depth": depth}, run)
        actual = {to_letters(code, 12)[:depth] for code in standard_boards}
        assert set(keys) == actual and len(keys) == len(actual)
        assert keys == sorted(keys, key=lambda key: [LETTERS.index(letter) for letter in key])


def test_plan_under_facts_keeps_only_the_prefixes_of_their_boards(standard_boards: list[int]) -> None:
    facts = [
        {"sector": 2, "object": "gas_cloud", "present": True},
        {"sector": 5, "object": "comet", "present": False},
    ]
    kept = [c for c in standard_boards if decode(c, 12)[1] == GAS_CLOUD and decode(c, 12)[4] != COMET]
    with Run(60) as run:
        keys = planetx.plan({"mode": "standard", "shard_depth": 3, "constraints": facts}, run)
    assert len(keys) > 0 and sorted(keys) == sorted({to_letters(code, 12)[:3] for code in kept})


@pytest.mark.slow
def test_shards_cover_every_board_once(standard_boards: list[int]) -> None:
    params = {"mode": "standard", "shard_depth": 2}
    found = []
    with Run(120) as run:
        for key in planetx.plan(params, run):
            found += planetx.run_shard(params, key, run).rows
    assert sorted(found) == sorted(standard_boards)


def test_facts_shrink_the_set_exactly(standard_boards: list[int]) -> None:
    facts = [
        {"sector": 3, "object": "comet", "present": False},
        {"sector": 1, "object": "asteroid", "present": True},
    ]
    params = {"mode": "standard", "constraints": facts}
    expected = [c for c in standard_boards if decode(c, 12)[2] != COMET and decode(c, 12)[0] == ASTEROID]
    with Run(120) as run:
        found = [row for key in planetx.plan(params, run) for row in planetx.run_shard(params, key, run).rows]
    assert 0 < len(found) < 4446
    assert (
        sorted(found)
        == sorted(expected)
        == sorted(enumerate_boards(STANDARD, [(3, COMET, False), (1, ASTEROID, True)]))
    )


def test_combined_result_counts_objects_per_sector(standard_boards: list[int]) -> None:
    params = {"mode": "standard"}
    summaries = [{"count": len(standard_boards), "histogram": planetx.histogram(STANDARD, standard_boards)}]
    result = planetx.combine(params, summaries)
    assert result["count"] == 4446
    sector_7 = result["sectors"][6]
    expected = Counter(decode(c, 12)[6] for c in standard_boards)
    assert sector_7["counts"]["planet_x"] == expected[1]
    assert sector_7["planet_x_probability"] == pytest.approx(expected[1] / 4446)
    assert all(sum(s["counts"].values()) == 4446 for s in result["sectors"])
    assert sum(s["planet_x_probability"] for s in result["sectors"]) == pytest.approx(1.0)


def test_a_shard_over_its_cap_asks_to_be_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planetx, "SHARD_CAP", 100)
    with Run(60) as run:
        result = planetx.run_shard({"mode": "standard"}, "A", run)
    assert result.rows == [] and result.split == [f"A{letter}" for letter in "EXGDAC"]


def test_cancel_stops_an_enumeration() -> None:
    with Run(60) as run:
        run.stop()
        with pytest.raises(Cancelled):
            enumerate_shard(MODES["expert"], [], run)


@pytest.mark.slow
def test_in_process_solve_uses_every_core_and_writes_rows() -> None:
    rows: list[int] = []
    with Run(120, on_rows=rows.extend) as run:
        result = planetx.solve({"mode": "standard", "constraints": [], "shard_depth": None}, run)
    assert result["count"] == 4446 == len(rows) == len(set(rows))


class _Stop(Exception):
    pass


class _CountedRun(Run):
    """A run whose checks are counted (each placement of Planet X is one), stopping at the `stop_at`th."""

    def __init__(self, stop_at: int | None = None) -> None:
        super().__init__()
        self.checks, self.stop_at = 0, stop_at

    def raise_if_stopped(self) -> None:
        self.checks += 1
        if self.checks == self.stop_at:
            raise _Stop


def test_a_checkpoint_stops_the_enumeration_between_placements() -> None:
    with pytest.raises(_Stop), _CountedRun(stop_at=3) as run:
        enumerate_boards(MODES["expert"])
    assert run.checks == 3
    with _CountedRun() as run:
        assert len(enumerate_boards(STANDARD)) == 4446
    assert run.checks > 100  # many placements, each a small part of the work


def test_a_cancelled_run_stops_boards_enumerated_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from puzzles.planetx import boardset

    monkeypatch.setattr(boardset, "_cache", {})  # this process may already hold the expert boards
    with pytest.raises(Cancelled), Run() as run:
        run.stop()
        boardset.all_boards(MODES["expert"], run)
    assert boardset._cache == {}


@pytest.mark.parametrize(("size", "high"), [(1000, 40), (1000, 10**12), (200_000, 300_000), (3, 2)])
def test_grouping_by_key_matches_sorting_to_the_last_bit(size: int, high: int) -> None:
    """Small key ranges are counted in one pass, large ones sorted: the same keys, counts and weighted
    sums (the same floats, so games replay the same either way)."""
    from puzzles.planetx.boardset import unique_inverse, weighted_unique

    rng = np.random.default_rng(size)
    keys, weights = rng.integers(0, high, size), rng.random(size)
    distinct, inverse = np.unique(keys, return_inverse=True)
    found, counts = weighted_unique(keys, None)
    assert np.array_equal(found, distinct) and np.array_equal(counts, np.bincount(inverse))
    found, sums = weighted_unique(keys, weights)
    assert np.array_equal(found, distinct) and np.array_equal(sums, np.bincount(inverse, weights=weights))
    found, where = unique_inverse(keys)
    assert np.array_equal(found, distinct) and np.array_equal(where, inverse)
