"""The third-turn book of `best` (puzzles.mastermind.third): stored entries are what the builder gives, `best`
plays them, a stored guess splits its codes as well as any code does, and the other sizes keep their path."""

import itertools

import numpy as np
import pytest

from puzzles import mastermind as mm
from puzzles.mastermind import book, third
from puzzles.mastermind.model import _Session
from puzzles.runtime import Run

from .test_mastermind import entropy_key, paired_score


def _smallest_parts(size: str, count: int) -> list[tuple[str, str]]:
    """The `count` stored (first feedback, second feedback) pairs of fewest codes."""
    after = third.stored_thirds()[size]["after"]
    pairs = [
        (entry["third"][key]["left"], first, key) for first, entry in after.items() for key in entry["third"]
    ]
    return [(first, key) for _, first, key in sorted(pairs)[:count]]


def test_the_stored_sizes() -> None:
    assert set(third.stored_thirds()) == {"6x9", "7x7", "8x6"}
    assert set(third.MIN_LEFT) == {(6, 9), (7, 7), (8, 6)}


#: one part larger than SAMPLE: its first pass samples the part, and at 7×7 its candidates are a draw refined
#: by hill climbing (the smallest parts of the other sizes take every candidate or the draw, unsampled)
LARGER = {"7x7": [("1,2", "1,2")]}


@pytest.mark.slow
@pytest.mark.parametrize("size", ["6x9", "7x7", "8x6"])
def test_stored_entries_are_what_the_builder_gives(size: str) -> None:
    stored = third.stored_thirds()[size]
    n, k = map(int, size.split("x"))
    built = third._Size(n, k)
    for first, key in _smallest_parts(size, 3) + LARGER.get(size, []):
        fresh = built.third_guesses(first, only={key})
        assert fresh[key] == stored["after"][first]["third"][key], (first, key)


@pytest.mark.parametrize("size", ["6x9", "7x7", "8x6"])
def test_the_stored_guesses_follow_the_opening_book(size: str) -> None:
    stored = third.stored_thirds()[size]
    n, k = map(int, size.split("x"))
    assert stored["first"] == book.stored_books()[size]["first"]
    for first, entry in stored["after"].items():
        assert entry["second"] == book.stored_books()[size]["second"][first]["guess"]
        assert all(move["left"] > third.MIN_LEFT[(n, k)] for move in entry["third"].values())


def test_a_third_guess_splits_as_well_as_random_codes_do() -> None:
    """6×9, the smallest stored part: the stored guess against 300 random codes, by hand."""
    stored = third.stored_thirds()["6x9"]
    first_key, key = _smallest_parts("6x9", 1)[0]
    first = book._code(stored["first"])
    second = book._code(stored["after"][first_key]["second"])
    feedbacks = [tuple(map(int, first_key.split(","))), tuple(map(int, key.split(",")))]
    codes = [
        c
        for c in itertools.product(range(9), repeat=6)
        if paired_score(list(c), list(first)) == feedbacks[0]
        and paired_score(list(c), list(second)) == feedbacks[1]
    ]
    move = stored["after"][first_key]["third"][key]
    assert len(codes) == move["left"]
    best = entropy_key(book._code(move["guess"]), codes)
    rng = np.random.default_rng(0)
    for index in rng.choice(9**6, 300, replace=False):
        assert entropy_key(mm.code_at(int(index), 6, 9), codes) <= best


def test_best_plays_the_third_book() -> None:
    stored = third.stored_thirds()["6x9"]
    first = book._code(stored["first"])
    first_key, key = _smallest_parts("6x9", 1)[0]
    second = book._code(stored["after"][first_key]["second"])
    history = ((first, *map(int, first_key.split(","))), (second, *map(int, key.split(","))))
    with Run(60) as run:
        decision = mm.decide(6, 9, history, "best", 0, 100, _Session(run))
    move = stored["after"][first_key]["third"][key]
    assert decision.guess == book._code(move["guess"]) and decision.remaining == move["left"]
    # other sizes, other openings, other turns: no stored third guess
    assert third.third_move(4, 6, (((0, 0, 1, 1), 0, 0), ((2, 2, 3, 3), 0, 0))) is None
    assert third.third_move(16, 6, ()) is None
    assert third.third_move(6, 9, history[:1]) is None
    assert third.third_move(6, 9, (((0, 1, 2, 3, 4, 5), 0, 0), history[1])) is None
