"""The 6×9 and 7×7 middle game of `best` (puzzles.mastermind.middle): its score is the by-hand count of
expected further guesses, its guess scores no worse than the codes it was chosen among, `best` plays it,
and the other sizes keep their path."""

import itertools
import math
import random

import numpy as np

from puzzles import mastermind as mm
from puzzles.mastermind import middle, stronger
from puzzles.mastermind.model import _Session
from puzzles.mastermind.sampled import _fitting as _fitting_rows
from puzzles.mastermind.scoring import _rng
from puzzles.mastermind.split import _Split
from puzzles.mastermind.stronger import _engine, _sizes
from puzzles.runtime import Run

from .test_mastermind import paired_score


def further_by_hand(m: int) -> float:
    return {1: 1.0, 2: 1.5}.get(m, middle.FURTHER_A + middle.FURTHER_B * math.log(m))


def cost_by_hand(guess: tuple, codes: list) -> float:
    """Σ |p| · further(|p|) over the parts of `codes` by feedback to `guess`, the all-black part free."""
    sizes: dict = {}
    for code in codes:
        feedback = paired_score(list(code), list(guess))
        sizes[feedback] = sizes.get(feedback, 0) + 1
    return sum(s * further_by_hand(s) for feedback, s in sizes.items() if feedback[0] != len(guess))


def _engine_cost(guess: tuple, codes: list, n: int, k: int) -> float:
    engine = _engine(n, k)
    classes = engine.classes(engine.encode(np.array([guess], dtype=np.int8)), engine.encode(np.array(codes)))
    return float(middle.expected_cost(_sizes(classes, n), n)[0])


def test_the_cost_is_the_count_by_hand() -> None:
    rng = random.Random(3)
    codes = [tuple(rng.randrange(9) for _ in range(6)) for _ in range(300)]
    for guess in [codes[0], codes[5], (0, 0, 1, 1, 2, 3), (8, 7, 6, 5, 4, 3)]:
        assert _engine_cost(guess, codes, 6, 9) == round(cost_by_hand(guess, codes), 9)
    # a small case counted out: 3 codes, the guess one of them and splitting the other two apart
    three = [(0, 0, 0, 0, 0, 0), (1, 1, 1, 1, 1, 1), (0, 1, 1, 1, 1, 1)]
    assert _engine_cost(three[2], three, 6, 9) == 2.0  # two parts of one: 1 further guess each
    # a guess that fits none of them leaves one part of three
    assert _engine_cost((2,) * 6, three, 6, 9) == round(3 * further_by_hand(3), 9)


def _fitting(history: tuple, n: int, k: int) -> list:
    """Every code that fits, by numpy comparisons (sampled._fitting, not the engine's tables)."""
    every = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int8)
    return [tuple(int(c) for c in row) for row in every[_fitting_rows(every, history, k)]]


def test_the_guess_beats_the_codes_that_fit_and_random_codes() -> None:
    """6×9 after three guesses that leave a few hundred codes: the chosen guess costs no more than 60 codes
    that fit or 60 random codes, by hand."""
    secret = (0, 1, 2, 3, 4, 5)
    guesses = [(0, 0, 1, 1, 2, 6), (3, 4, 6, 7, 8, 8), (5, 7, 2, 0, 8, 1)]
    history = tuple((g, *paired_score(list(secret), list(g))) for g in guesses)
    codes = _fitting(history, 6, 9)
    assert stronger.PREVIOUS_ENDGAME < len(codes) <= middle.MAX_TARGETS
    with Run(60) as run:
        decision = middle.decide_middle(6, 9, history, random.Random(1), run)
    assert decision is not None and decision.remaining == len(codes)
    chosen = cost_by_hand(decision.guess, codes)
    rng = np.random.default_rng(0)
    sampled = [codes[int(i)] for i in rng.choice(len(codes), min(60, len(codes)), replace=False)]
    others = sampled + [mm.code_at(int(i), 6, 9) for i in rng.choice(9**6, 60, replace=False)]
    assert all(chosen <= cost_by_hand(code, codes) + 1e-9 for code in others)


def test_only_6x9_and_7x7_past_the_end_game() -> None:
    assert middle.middle_fits(6, 9) and middle.middle_fits(7, 7)
    assert not any(middle.middle_fits(n, k) for n, k in [(4, 6), (5, 8), (8, 6), (16, 6)])
    with Run(60) as run:
        assert middle.decide_middle(6, 9, (), random.Random(0), run) is None
        assert middle.decide_middle(5, 8, (((0, 0, 1, 1, 2), 1, 1),), random.Random(0), run) is None
        # few codes fit: the exact end game's
        few = (((0, 1, 2, 3, 4, 5), 4, 2),)
        assert middle.decide_middle(6, 9, few, random.Random(0), run) is None


def test_best_plays_the_middle_game() -> None:
    secret = (0, 1, 2, 3, 4, 5)
    guesses = [(0, 0, 1, 1, 2, 6), (3, 4, 6, 7, 8, 8), (5, 7, 2, 0, 8, 1)]
    history = tuple((g, *paired_score(list(secret), list(g))) for g in guesses)
    with Run(60) as run:
        decision = mm.decide(6, 9, history, "best", 0, 100, _Session(run))
        expected = middle.decide_middle(6, 9, history, _rng(0, history), run)
    assert expected is not None and decision.guess == expected.guess


def test_best_plays_the_middle_game_at_7x7_above_its_end_game() -> None:
    """At 7×7 the middle game takes over from `stronger` once more than its end game's 200 codes fit
    (stronger.ENDGAME_AT; here after the three book guesses), and leaves fewer to its end game."""
    rng = random.Random(3)
    played = {"middle": 0, "end game": 0, "end game above 120": 0}
    with Run(120) as run:
        for _ in range(40):
            secret = tuple(rng.randrange(7) for _ in range(7))
            history: tuple = ()
            for _turn in range(3):
                guess = mm.decide(7, 7, history, "best", 0, 100, _Session(run)).guess
                history += ((guess, *paired_score(list(secret), list(guess))),)
                if history[-1][1] == 7:
                    break
            else:
                count = _Split(7, 7, history, run).count
                expected = middle.decide_middle(7, 7, history, _rng(0, history), run)
                if count > stronger.endgame_size(7, 7):
                    assert expected is not None
                    assert mm.decide(7, 7, history, "best", 0, 100, _Session(run)).guess == expected.guess
                    played["middle"] += 1
                else:
                    assert expected is None
                    played["end game"] += 1
                    played["end game above 120"] += count > stronger.ENDGAME
            if all(played.values()):
                break
    assert all(played.values()), played
