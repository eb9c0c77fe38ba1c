"""The propagator enumeration of Planet X, shard by shard, against the plain-Python enumerator
(`rules.enumerate_boards`): the same boards (count and a hash of the sorted codes), no duplicates, every
board valid, custom facts honoured, and cancel and deadlines interrupt it."""

import hashlib
import random
import threading
import time
from typing import Any

import pytest

from puzzles.planetx import enumerate as planetx
from puzzles.planetx.board import LETTERS, MODES, decode, to_letters
from puzzles.planetx.rules import enumerate_boards, is_valid
from puzzles.planetx.solver import BoardWalker, board_walker, enumerate_shard
from puzzles.runtime import Cancelled, Run, TimeLimitExceeded

STANDARD, EXPERT = MODES["standard"], MODES["expert"]


def digest(codes: list[int]) -> tuple[int, str]:
    return len(codes), hashlib.sha256(",".join(map(str, sorted(codes))).encode()).hexdigest()


def prefix(key: str) -> list[int]:
    return [LETTERS.index(letter) for letter in key]


def shards(params: dict[str, Any]) -> dict[str, list[int]]:
    with Run(120) as run:
        return {key: planetx.run_shard(params, key, run).rows for key in planetx.plan(params, run)}


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_every_standard_shard_is_the_reference_shard(depth: int) -> None:
    found = shards({"mode": "standard", "shard_depth": depth})
    for key, rows in found.items():
        assert digest(rows) == digest(enumerate_boards(STANDARD, prefix=prefix(key))), key
    every = [code for rows in found.values() for code in rows]
    assert len(every) == len(set(every)) == 4446
    assert digest(every) == digest(enumerate_boards(STANDARD))
    assert all(is_valid(STANDARD, decode(code, 12)) for code in every)


def test_the_whole_standard_board_in_one_walk() -> None:
    with Run(60) as run:
        outcome = enumerate_shard(STANDARD, [], run)
    assert outcome.complete and digest(outcome.codes) == digest(enumerate_boards(STANDARD))


@pytest.mark.parametrize(
    "facts",
    [
        [(3, 5, False), (1, 4, True)],  # no comet in 3, an asteroid in 1
        [(5, 1, True)],  # Planet X in 5
        [(2, 0, True), (12, 0, True), (7, 2, False)],
    ],
)
def test_custom_facts_are_honoured_on_every_shard(facts: list[tuple[int, int, bool]]) -> None:
    constraints = [{"sector": s, "object": name_of(o), "present": p} for s, o, p in facts]
    found = shards({"mode": "standard", "constraints": constraints, "shard_depth": 2})
    for key, rows in found.items():
        assert digest(rows) == digest(enumerate_boards(STANDARD, facts, prefix(key))), key
    every = [code for rows in found.values() for code in rows]
    assert 0 < len(every) == len(set(every)) < 4446
    assert digest(every) == digest(enumerate_boards(STANDARD, facts))


def name_of(obj: int) -> str:
    return ("empty", "planet_x", "gas_cloud", "dwarf_planet", "asteroid", "comet")[obj]


def test_facts_do_not_leak_into_the_walker_without_them() -> None:
    with Run(60) as run:
        narrowed = enumerate_shard(STANDARD, [4], run, [(5, 1, True)]).codes
        plain = enumerate_shard(STANDARD, [4], run).codes
    assert digest(narrowed) == digest(enumerate_boards(STANDARD, [(5, 1, True)], [4]))
    assert digest(plain) == digest(enumerate_boards(STANDARD, prefix=[4]))


def test_a_deadline_interrupts_the_walk_and_the_next_run_gets_every_board() -> None:
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded), Run(0.5) as run:
        enumerate_shard(EXPERT, [], run)  # the whole expert board in one walk takes minutes
    assert time.monotonic() - started < 3
    with Run(60) as run:
        codes = enumerate_shard(EXPERT, prefix("AAG"), run).codes
    assert digest(codes) == digest(enumerate_boards(EXPERT, prefix=prefix("AAG")))


def test_cancel_interrupts_the_walk() -> None:
    with Run(60) as run:
        threading.Timer(0.3, run.stop).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            enumerate_shard(EXPERT, [], run)
    assert time.monotonic() - started < 3


def test_one_walker_per_mode_and_facts() -> None:
    assert board_walker(EXPERT) is board_walker(EXPERT)
    assert board_walker(EXPERT, ((1, 0, True),)) is not board_walker(EXPERT)


def test_a_capped_shard_asks_to_be_split() -> None:
    with Run(60) as run:
        result = planetx.run_shard({"mode": "standard", "max_shard_boards": 100}, "A", run)
    assert result.rows == [] and result.split == [f"A{letter}" for letter in LETTERS]


@pytest.mark.slow
def test_a_sample_of_expert_shards_is_the_reference() -> None:
    params = {"mode": "expert", "shard_depth": 4, "max_shard_boards": 50_000}
    with Run(600) as run:
        keys = planetx.plan(params, run)
        sample = random.Random(39).sample(keys, 40)
        for key in sample:
            result = planetx.run_shard(params, key, run)
            assert result.split is None and result.summary["count"] == len(result.rows)
            assert len(set(result.rows)) == len(result.rows)
            assert digest(result.rows) == digest(enumerate_boards(EXPERT, prefix=prefix(key))), key


def test_the_histogram_counts_each_object_per_sector() -> None:
    codes = enumerate_boards(EXPERT, prefix=prefix("AAG"))
    table = planetx.histogram(EXPERT, codes)
    boards = [decode(code, 18) for code in codes]
    assert table == [[sum(b[i] == obj for b in boards) for obj in range(6)] for i in range(18)]
    assert planetx.histogram(EXPERT, []) == [[0] * 6 for _ in range(18)]


@pytest.mark.slow
def test_boards_found_again_are_not_counted_twice() -> None:
    """With phase selection 0 Z3 drops some of the walk's conflicts and meets those boards again."""
    walker = BoardWalker(EXPERT)
    walker.model.solver.set("smt.phase_selection", 0)
    with Run(600) as run:
        keys = planetx.plan({"mode": "expert", "shard_depth": 4}, run)
        for key in random.Random(39).sample(keys, 40):
            fixed = [walker.model.at(index + 1, obj) for index, obj in enumerate(prefix(key))]
            walk = walker.walker.walk(run, fixed)
            assert walk.complete and len(set(walk.values)) == len(walk.values)
            assert digest(walk.values) == digest(enumerate_boards(EXPERT, prefix=prefix(key))), key


def test_the_letters_of_a_board_are_its_sectors_objects() -> None:
    """`to_letters` reads three sectors per table look-up: the same as sector by sector, at any length."""
    draw = random.Random(39)
    boards = [sum(draw.randrange(6) << (3 * s) for s in range(EXPERT.sectors)) for _ in range(3000)]
    for code in enumerate_boards(STANDARD) + boards:
        for sectors in range(1, EXPERT.sectors + 1):
            assert to_letters(code, sectors) == "".join(LETTERS[obj] for obj in decode(code, sectors))
