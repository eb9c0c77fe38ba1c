"""The middle game of `best` at 6×9 and 8×6 (puzzles.mastermind.middle): its score is the by-hand count of
expected further guesses, its guess scores no worse than the codes it was chosen among, `best` plays it
(at 8×6 from the fourth turn, `stronger`'s exact end game still at most 40 codes), and the other sizes keep
their path."""

import itertools
import math
import random

import numpy as np
import pytest

from puzzles import mastermind as mm
from puzzles.mastermind import middle, stronger
from puzzles.mastermind.model import _Session
from puzzles.mastermind.sampled import _fitting as _fitting_rows
from puzzles.mastermind.scoring import _rng
from puzzles.mastermind.stronger import _engine, _sizes
from puzzles.runtime import Run

from .test_mastermind import paired_score


def further_by_hand(m: int, n: int, k: int) -> float:
    a, b = middle.FURTHER[(n, k)]
    return {1: 1.0, 2: 1.5}.get(m, a + b * math.log(m))


def cost_by_hand(guess: tuple, codes: list, k: int) -> float:
    """Σ |p| · further(|p|) over the parts of `codes` by feedback to `guess`, the all-black part free."""
    sizes: dict = {}
    for code in codes:
        feedback = paired_score(list(code), list(guess))
        sizes[feedback] = sizes.get(feedback, 0) + 1
    n = len(guess)
    return sum(s * further_by_hand(s, n, k) for feedback, s in sizes.items() if feedback[0] != n)


def _engine_cost(guess: tuple, codes: list, n: int, k: int) -> float:
    engine = _engine(n, k)
    classes = engine.classes(engine.encode(np.array([guess], dtype=np.int8)), engine.encode(np.array(codes)))
    return float(middle.expected_cost(_sizes(classes, n), n, k)[0])


def test_the_cost_is_the_count_by_hand() -> None:
    rng = random.Random(3)
    for n, k in [(6, 9), (8, 6)]:
        codes = [tuple(rng.randrange(k) for _ in range(n)) for _ in range(300)]
        for guess in [
            codes[0],
            codes[5],
            tuple(i // 2 for i in range(n)),
            tuple((n - 1 - i) % k for i in range(n)),
        ]:
            assert _engine_cost(guess, codes, n, k) == round(cost_by_hand(guess, codes, k), 9)
    # a small case counted out: 3 codes, the guess one of them and splitting the other two apart
    three = [(0, 0, 0, 0, 0, 0), (1, 1, 1, 1, 1, 1), (0, 1, 1, 1, 1, 1)]
    assert _engine_cost(three[2], three, 6, 9) == 2.0  # two parts of one: 1 further guess each
    # a guess that fits none of them leaves one part of three
    assert _engine_cost((2,) * 6, three, 6, 9) == round(3 * further_by_hand(3, 6, 9), 9)


def _fitting(history: tuple, n: int, k: int) -> list:
    """Every code that fits, by numpy comparisons (sampled._fitting, not the engine's tables)."""
    every = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int8)
    return [tuple(int(c) for c in row) for row in every[_fitting_rows(every, history, k)]]


def test_only_6x9_and_8x6_past_the_end_game() -> None:
    assert middle.middle_fits(6, 9) and middle.middle_fits(8, 6)
    assert not any(middle.middle_fits(n, k) for n, k in [(4, 6), (5, 8), (16, 6), (6, 6), (7, 6), (10, 6)])
    assert (middle.endgame_size(6, 9), middle.endgame_size(8, 6)) == (70, 40)
    with Run(60) as run:
        assert middle.decide_middle(6, 9, (), random.Random(0), run) is None
        assert middle.decide_middle(5, 8, (((0, 0, 1, 1, 2), 1, 1),), random.Random(0), run) is None
        # few codes fit: the exact end game's
        few = (((0, 1, 2, 3, 4, 5), 4, 2),)
        assert middle.decide_middle(6, 9, few, random.Random(0), run) is None
        few = (((0, 1, 2, 3, 4, 5, 0, 1), 6, 2),)  # 8×6: 28 codes fit (the transpositions)
        assert middle.decide_middle(8, 6, few, random.Random(0), run) is None


def _history(secret: tuple, guesses: list) -> tuple:
    return tuple((g, *paired_score(list(secret), list(g))) for g in guesses)


#: 6×9 and 8×6 histories of three guesses leaving a few hundred codes
HISTORY_6X9 = _history((0, 1, 2, 3, 4, 5), [(0, 0, 1, 1, 2, 6), (3, 4, 6, 7, 8, 8), (5, 7, 2, 0, 8, 1)])
HISTORY_8X6 = _history(
    (0, 1, 2, 3, 4, 5, 0, 1),
    [(0, 0, 0, 1, 1, 2, 2, 3), (4, 4, 5, 5, 0, 1, 3, 2), (5, 3, 1, 0, 2, 2, 4, 4)],
)


def test_best_plays_the_middle_game() -> None:
    for (n, k), history in [((6, 9), HISTORY_6X9), ((8, 6), HISTORY_8X6)]:
        with Run(60) as run:
            decision = mm.decide(n, k, history, "best", 0, 100, _Session(run))
            expected = middle.decide_middle(n, k, history, _rng(0, history), run)
        assert expected is not None and decision.guess == expected.guess


def test_8x6_end_game_and_other_sizes_keep_their_path() -> None:
    """At 8×6 with at most 40 codes left, and at 5×8, `best` plays `stronger`'s guess as before."""
    few = (((0, 1, 2, 3, 4, 5, 0, 1), 6, 2),)
    five = _history((1, 2, 3, 4, 5), [(0, 0, 1, 1, 2), (2, 3, 4, 5, 6), (7, 7, 6, 5, 3)])
    for n, k, history in [(8, 6, few), (5, 8, five)]:
        with Run(60) as run:
            decision = mm.decide(n, k, history, "best", 0, 100, _Session(run))
            expected = stronger.decide_best(n, k, history, 0, 100, _Session(run))
        assert expected is not None and decision.guess == expected.guess


@pytest.mark.parametrize("n, k", [(6, 9), (8, 6)])
def test_the_guess_beats_the_codes_that_fit_and_random_codes(n: int, k: int) -> None:
    """After three guesses that leave a few hundred codes: the chosen guess costs no more than 60 codes
    that fit or 60 random codes, by hand."""
    history = HISTORY_6X9 if (n, k) == (6, 9) else HISTORY_8X6
    codes = _fitting(history, n, k)
    assert middle.endgame_size(n, k) < len(codes) <= middle.MAX_TARGETS
    with Run(60) as run:
        decision = middle.decide_middle(n, k, history, random.Random(1), run)
    assert decision is not None and decision.remaining == len(codes)
    chosen = cost_by_hand(decision.guess, codes, k)
    rng = np.random.default_rng(0)
    sampled = [codes[int(i)] for i in rng.choice(len(codes), min(60, len(codes)), replace=False)]
    others = sampled + [mm.code_at(int(i), n, k) for i in rng.choice(k**n, 60, replace=False)]
    assert all(chosen <= cost_by_hand(code, codes, k) + 1e-9 for code in others)
