"""The fourth-turn book of `best` at 6×9 (puzzles.mastermind.fourth): stored entries are what the builder (and
a live game) gives, `best` plays them, and other histories find no entry."""

from puzzles import mastermind as mm
from puzzles.mastermind import fourth, middle, stronger
from puzzles.mastermind.book import _code
from puzzles.mastermind.model import _Session
from puzzles.mastermind.scoring import _rng
from puzzles.runtime import Run

from .test_mastermind_middle import _fitting


def _stored() -> dict:
    return fourth.stored_fourths()["6x9"]["after"]


def _history(key: str) -> tuple:
    """The book guesses' history behind a stored key ("b,w|b,w|b,w")."""
    from puzzles.mastermind.book import stored_books
    from puzzles.mastermind.third import stored_thirds

    feedbacks = [tuple(map(int, part.split(","))) for part in key.split("|")]
    first = _code(stored_books()["6x9"]["first"])
    entry = stored_thirds()["6x9"]["after"][f"{feedbacks[0][0]},{feedbacks[0][1]}"]
    third = _code(entry["third"][f"{feedbacks[1][0]},{feedbacks[1][1]}"]["guess"])
    guesses = (first, _code(entry["second"]), third)
    return tuple((g, *f) for g, f in zip(guesses, feedbacks, strict=True))


def _smallest(count: int) -> list[str]:
    return sorted(_stored(), key=lambda key: (_stored()[key]["left"], key))[:count]


def test_the_stored_book_covers_every_large_part() -> None:
    stored = _stored()
    assert len(stored) == 657
    assert all(move["left"] > stronger.PREVIOUS_ENDGAME for move in stored.values())
    assert sum(move["left"] for move in stored.values()) == 337_679  # of 531,441 codes (by the builder)


def test_stored_entries_are_what_a_live_game_gives() -> None:
    """The smallest stored parts: the codes that fit, counted by hand, and the guess of a fresh choice."""
    for key in _smallest(2):
        history, move = _history(key), _stored()[key]
        assert move["left"] > stronger.PREVIOUS_ENDGAME
        with Run(60) as run:
            live = middle.decide_middle(6, 9, history, _rng(0, history), run)
        assert live is not None and live.remaining == move["left"]
        assert live.guess == _code(move["guess"])
        # the codes that fit, counted without the engine
        assert len(_fitting(history, 6, 9)) == move["left"]


def test_best_plays_the_fourth_book() -> None:
    key = _smallest(1)[0]
    history = _history(key)
    with Run(60) as run:
        decision = mm.decide(6, 9, history, "best", 0, 100, _Session(run))
    assert decision.guess == _code(_stored()[key]["guess"]) and decision.remaining == _stored()[key]["left"]
    # another third guess, another size, another turn: no stored guess
    other = (*history[:2], ((0, 1, 2, 3, 4, 5), *history[2][1:]))
    assert fourth.fourth_move(6, 9, other) is None
    assert fourth.fourth_move(6, 9, history[:2]) is None
    assert fourth.fourth_move(8, 6, history) is None
