"""The opening book of `best` (puzzles.mastermind.book): the stored book is what the builder gives, its
moves are what `best` plays, and its second guesses split their codes as well as any code does."""

import itertools

import numpy as np
import pytest

from puzzles import mastermind as mm
from puzzles.mastermind import book, third
from puzzles.mastermind.model import _Session
from puzzles.mastermind.stronger import _codes_of, _engine
from puzzles.runtime import Run

from .test_mastermind import entropy_key, paired_score


def _without_time(entry: dict) -> dict:
    return {key: value for key, value in entry.items() if key != "seconds"}


def test_the_stored_books() -> None:
    assert set(book.stored_books()) == {"5x5", "5x8", "7x7", "8x6", "6x9"}


@pytest.mark.parametrize(("n", "k"), [(5, 8), (5, 5)])
def test_the_stored_small_books_are_what_the_builder_gives(n: int, k: int) -> None:
    assert _without_time(book.build(n, k)) == _without_time(book.stored_books()[f"{n}x{k}"])


def test_the_sampled_first_pass_keeps_each_best_second_guess(monkeypatch: pytest.MonkeyPatch) -> None:
    """The larger sizes' path (a first pass against a sample, a shortlist scored exactly), taken at 5×8 by
    lowering its threshold: a quarter of the codes sampled, it prunes candidates and still finds the book."""
    monkeypatch.setattr(book, "EXACT_WORK", 0)
    monkeypatch.setattr(book, "SAMPLE", 8_000)
    said: list[str] = []
    assert _without_time(book.build(5, 8, log=said.append)) == _without_time(book.stored_books()["5x8"])
    assert any("candidates kept for the exact pass" in line for line in said), said


@pytest.mark.slow
@pytest.mark.parametrize(("n", "k"), [(6, 9), (7, 7)])
def test_each_stored_larger_second_guess_leaves_its_codes_and_splits_them_as_well_as_random_codes(
    n: int, k: int
) -> None:
    """Rebuilding these books is a long run (`python -m puzzles.mastermind.book`); here each stored
    second guess is held to what it must be: the codes its feedback leaves counted, and its split of them
    scored exactly against 64 random codes'."""
    entry = book.stored_books()[f"{n}x{k}"]
    engine = _engine(n, k)
    every = engine.encode(_codes_of(n, k).astype(np.int8))
    first = engine.encode(np.array([book._code(entry["first"])], dtype=np.int8))
    first_classes = engine.classes(first, every)[0].astype(np.int64)
    parts = np.bincount(first_classes, minlength=(n + 1) ** 2)
    stored = [np.ravel_multi_index(book._code(move["guess"]), (k,) * n) for move in entry["second"].values()]
    rivals = np.random.default_rng(0).choice(k**n, 64, replace=False)
    candidates = np.concatenate([np.array(stored, dtype=np.int64), rivals])
    joint = book._joint_counts(engine, every[candidates], every, first_classes, n)
    scores = np.round(-book._slog(k**n)[joint].sum(2), 9)  # [candidate, first feedback class]
    for row, (feedback, move) in enumerate(entry["second"].items()):
        part = third._class_of(n, feedback)
        assert parts[part] == move["left"], feedback
        assert (scores[len(stored) :, part] <= scores[row, part]).all(), feedback


def test_a_second_guess_splits_as_well_as_every_code_does() -> None:
    """5×8, one feedback: the stored second guess against every one of the 32,768 codes, by hand."""
    entry = book.stored_books()["5x8"]
    first = book._code(entry["first"])
    feedback = "3,0"
    black, white = map(int, feedback.split(","))
    codes = [
        c
        for c in itertools.product(range(8), repeat=5)
        if paired_score(list(c), list(first)) == (black, white)
    ]
    assert len(codes) == entry["second"][feedback]["left"]
    stored = entropy_key(book._code(entry["second"][feedback]["guess"]), codes)
    rng = np.random.default_rng(0)
    for index in rng.choice(8**5, 400, replace=False):
        other = mm.code_at(int(index), 5, 8)
        assert entropy_key(other, codes) <= stored


def test_best_plays_the_book() -> None:
    entry = book.stored_books()["8x6"]
    first = book._code(entry["first"])
    feedback, second = next(iter(entry["second"].items()))
    black, white = map(int, feedback.split(","))
    with Run(60) as run:
        session = _Session(run)
        opening = mm.decide(8, 6, (), "best", 0, 100, session)
        reply = mm.decide(8, 6, ((first, black, white),), "best", 0, 100, session)
    assert opening.guess == first and opening.remaining == 6**8
    assert reply.guess == book._code(second["guess"]) and reply.remaining == second["left"]
    # a feedback that leaves few codes, and a first guess off the book, are the strategy's own
    assert all(second["left"] > book.MIN_LEFT for second in entry["second"].values())
    assert book.book_move(8, 6, (((0, 1, 2, 3, 4, 5, 0, 1), 0, 0),)) is None
    assert book.book_move(4, 6, ()) is None


def test_a_third_turn_decision_is_kept_per_process_as_a_copy() -> None:
    from puzzles.mastermind import stronger

    first = book._code(book.stored_books()["5x8"]["first"])
    second = book._code(book.stored_books()["5x8"]["second"]["1,1"]["guess"])
    history = ((first, 1, 1), (second, 0, 2))
    stronger._THIRD.clear()
    with Run(60) as run:
        session = _Session(run)
        fresh = mm.decide(5, 8, history, "best", 0, 100, session)
        fresh.guess = None  # the caller's copy: the kept one is untouched
        kept = mm.decide(5, 8, history, "best", 0, 100, session)
    assert (5, 8, history, 0) in stronger._THIRD
    assert kept.guess == stronger._THIRD[(5, 8, history, 0)].guess is not None
    assert kept.remaining == len(mm.codes._consistent_codes(5, 8, history))
