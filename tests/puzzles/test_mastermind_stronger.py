"""Strategy `best` at the middle sizes (puzzles.mastermind.stronger): the look-up feedback against the rules
by hand, the end game against the exact search, and whole games that end on their secrets."""

import itertools
import random

import numpy as np
import pytest

from puzzles import mastermind as mm
from puzzles.mastermind import optimal, stronger
from puzzles.mastermind.model import _Session
from puzzles.runtime import Run, Stopped

from .test_mastermind import assert_games_are_true, paired_score


@pytest.mark.parametrize(("n", "k"), [(5, 8), (8, 6), (6, 9), (3, 4)])
def test_the_engine_gives_the_rules_by_hand(n: int, k: int) -> None:
    rng = random.Random(n * k)
    codes = np.array([[rng.randrange(k) for _ in range(n)] for _ in range(60)], dtype=np.int8)
    engine = stronger._Engine(n, k)
    classes = engine.classes(engine.encode(codes[:30]), engine.encode(codes[30:]))
    for i, j in itertools.product(range(30), range(30)):
        black, white = paired_score(codes[30 + j].tolist(), codes[i].tolist())
        assert classes[i, j] == black * (n + 1) + black + white


def test_the_sizes_it_plays() -> None:
    assert stronger.engine_fits(5, 8) and stronger.engine_fits(8, 6)
    assert not stronger.engine_fits(6, 9)  # measured worse there than the previous best
    assert not stronger.engine_fits(4, 6)  # every secret fits in a play job: the previous best stays
    assert not stronger.engine_fits(16, 6)
    # at 6×9 the previous best plays the middle game and this strategy the end game
    assert stronger.endgame_fits(6, 9)
    assert not any(stronger.endgame_fits(n, k) for n, k in [(5, 8), (8, 6), (4, 6), (16, 6)])


@pytest.mark.slow
def test_the_end_game_at_6x9_is_this_strategys() -> None:
    rng = random.Random(11)
    secret = [rng.randrange(9) for _ in range(6)]
    history: tuple = ()
    for guess in ([0, 0, 1, 1, 2, 3], [4, 4, 5, 6, 7, 8], [1, 2, 0, 5, 4, 6], [3, 5, 7, 0, 8, 2]):
        black, white = paired_score(secret, guess)
        history += ((tuple(guess), black, white),)
    codes = mm.codes._consistent_codes(6, 9, history)
    assert 2 < len(codes) <= stronger.PREVIOUS_ENDGAME  # 33
    with Run(120) as run:
        decision = mm.decide(6, 9, history, "best", 0, 100, _Session(run))
        # one guess earlier, more codes fit: the previous best's turn
        assert stronger._previous_endgame(6, 9, history[:2], 0, _Session(run)) is None
    expected = stronger._endgame(6, 9, np.array(codes, dtype=np.int8), mm.scoring._rng(0, history))
    assert decision.guess == expected and decision.remaining == len(codes)


def optimum(n: int, k: int, codes: np.ndarray) -> int:
    """The least total guesses for `codes`, any code a guess (k**n ≤ 40,000 only)."""
    search, _ = stronger._local_search(n, k, codes, stronger._codes_of(n, k))
    return search.solve(np.arange(len(codes), dtype=np.int64))


def test_the_end_game_is_optimal_when_every_code_is_a_candidate(monkeypatch: pytest.MonkeyPatch) -> None:
    """5×8 takes its pool from every code; with EXTRA that large the end game is the exact optimum."""
    monkeypatch.setattr(stronger, "EXTRA", 8**5)
    rng = random.Random(4)
    secret = [rng.randrange(8) for _ in range(5)]
    history = []
    for guess in ([0, 0, 1, 2, 3], [4, 4, 5, 6, 7], [1, 2, 0, 5, 4]):
        black, white = paired_score(secret, guess)
        history.append((tuple(guess), black, white))
    codes = np.array(mm.codes._consistent_codes(5, 8, tuple(history)), dtype=np.int8)
    assert 3 <= len(codes) <= stronger.ENDGAME
    guess = stronger._endgame(5, 8, codes, random.Random(0))
    # the guess's total: |S| + Σ optimum of its parts, each searched with every code a guess
    parts: dict = {}
    for code in codes.tolist():
        parts.setdefault(paired_score(code, list(guess)), []).append(code)
    total = len(codes) + sum(
        optimum(5, 8, np.array(part, dtype=np.int8)) for fb, part in parts.items() if fb != (5, 0)
    )
    assert total == optimum(5, 8, codes)


@pytest.mark.parametrize(("n", "k", "count"), [(5, 8, 12), (8, 6, 6), (6, 9, 4)])
def test_games_at_the_middle_sizes_end_on_their_secrets(n: int, k: int, count: int) -> None:
    params = {"n": n, "k": k, "strategy": "best", "secrets": {"sample": count, "seed": 9}, "seed": 0}
    with Run(300) as run:
        result = mm.play(params, run)
    assert result["unsolved"] == 0 and result["games_count"] == count
    assert_games_are_true(result["games"], n)


def test_previous_best_is_still_reachable_for_the_baseline() -> None:
    history = ((tuple([0, 0, 1, 2, 3]), 1, 1),)
    with Run(60) as run:
        session = _Session(run)
        now = mm.decide(5, 8, history, "best", 0, 24, session)
        before = mm.decide(5, 8, history, stronger.PREVIOUS, 0, 24, session)
    assert now.strategy == before.strategy == "best"
    assert now.remaining == before.remaining


def test_a_stopped_run_ends_the_end_games_search() -> None:
    """The end game's exact search (up to PREVIOUS_ENDGAME codes at 6×9: seconds) asks the run every
    optimal.STOP_EVERY sets: a cancelled job stops there instead of finishing the search."""
    rng = random.Random(11)
    secret = [rng.randrange(9) for _ in range(6)]
    history: tuple = ()
    for guess in ([0, 0, 1, 1, 2, 3], [4, 4, 5, 6, 7, 8], [1, 2, 0, 5, 4, 6]):
        black, white = paired_score(secret, guess)
        history += ((tuple(guess), black, white),)
    codes = np.array(mm.codes._consistent_codes(6, 9, history), dtype=np.int8)
    assert 2 < len(codes) <= stronger.PREVIOUS_ENDGAME  # 115
    search, _ = stronger._local_search(6, 9, codes, codes)
    search.solve(np.arange(len(codes), dtype=np.int64))
    assert search.nodes > optimal.STOP_EVERY  # a search long enough to be asked
    with Run(60) as run:
        run.stop()
        with pytest.raises(Stopped):
            stronger._endgame(6, 9, codes, mm.scoring._rng(0, history), run)
    assert stronger._endgame(6, 9, codes, mm.scoring._rng(0, history)) is not None
