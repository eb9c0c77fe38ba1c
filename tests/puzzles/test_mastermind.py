"""Mastermind: scoring against checked vectors and a brute-force definition, every strategy's guesses
checked with plain Python, whole games, shards and cancellation."""

import itertools
import math
import random
import threading
import time
from collections import Counter

import numpy as np
import pytest

from puzzles import mastermind as mm
from puzzles.mastermind import games
from puzzles.mastermind.codes import _consistent_codes, _feedback_class, _Targets
from puzzles.mastermind.model import _sat_sample, _Session
from puzzles.mastermind.sampled import _classes_matrix, _fitting, _split_pick, _turns_to_finish
from puzzles.mastermind.split import _Split
from puzzles.runtime import Cancelled, Run

# (secret, guess, black, white), n = 4, k = 6, from the checked reference vectors
VECTORS = [
    ([2, 0, 0, 1], [2, 1, 1, 5], 1, 1),
    ([2, 0, 0, 1], [0, 5, 5, 4], 0, 1),
    ([2, 0, 0, 1], [1, 3, 0, 0], 1, 2),
    ([2, 0, 0, 1], [3, 2, 0, 1], 2, 1),
    ([2, 0, 0, 1], [2, 0, 0, 1], 4, 0),
    ([0, 0, 0, 0], [0, 0, 0, 0], 4, 0),
    ([0, 0, 1, 1], [1, 1, 0, 0], 0, 4),
    ([0, 0, 0, 1], [0, 1, 1, 1], 2, 0),
    ([1, 2, 3, 4], [4, 3, 2, 1], 0, 4),
    ([0, 1, 1, 2], [1, 1, 1, 1], 2, 0),
    ([1, 1, 2, 2], [2, 2, 2, 1], 1, 2),
    ([5, 5, 5, 5], [0, 1, 2, 3], 0, 0),
    ([0, 1, 2, 3], [0, 0, 0, 0], 1, 0),
    ([0, 0, 1, 2], [3, 0, 0, 0], 1, 1),
    ([1, 0, 0, 0], [0, 1, 1, 1], 0, 2),
]


def paired_score(secret: list[int], guess: list[int]) -> tuple[int, int]:
    """The rules by hand: pair exact matches first, then pair each remaining guess peg with any unpaired
    secret peg of its colour."""
    black = [s == g for s, g in zip(secret, guess, strict=True)]
    left = [s for s, hit in zip(secret, black, strict=True) if not hit]
    white = 0
    for g, hit in zip(guess, black, strict=True):
        if not hit and g in left:
            left.remove(g)
            white += 1
    return sum(black), white


def entropy_key(guess: tuple, codes: list) -> float:
    """How well `guess` splits `codes`, by hand (Σ s·ln s over its parts, negated: larger is better)."""
    sizes: dict = {}
    for code in codes:
        feedback = paired_score(list(code), list(guess))
        sizes[feedback] = sizes.get(feedback, 0) + 1
    return round(-sum(s * np.log(s) for s in sizes.values()), 9)


def random_history(rng: random.Random, n: int, k: int, turns: int) -> tuple[list[int], list[dict]]:
    secret = [rng.randrange(k) for _ in range(n)]
    history = []
    for _ in range(turns):
        guess = [rng.randrange(k) for _ in range(n)]
        black, white = mm.score(secret, guess)
        if black < n:
            history.append({"guess": guess, "black": black, "white": white})
    return secret, history


def fits(code: list[int], history: list[dict]) -> bool:
    return all(paired_score(code, e["guess"]) == (e["black"], e["white"]) for e in history)


def brute_force_remaining(n: int, k: int, history: list[dict]) -> int:
    return sum(fits(list(code), history) for code in itertools.product(range(k), repeat=n))


def ask(params: dict, time_limit: float = 60) -> dict:
    with Run(time_limit) as run:
        return mm.guess({"seed": 0, "samples": 24, "history": [], **params}, run)


def without_seconds(games: list[dict]) -> list[dict]:
    return [{key: value for key, value in game.items() if key != "seconds"} for game in games]


# -- scoring -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("secret", "guess", "black", "white"), VECTORS)
def test_score_matches_the_checked_vectors(
    secret: list[int], guess: list[int], black: int, white: int
) -> None:
    assert mm.score(secret, guess) == (black, white)
    assert paired_score(secret, guess) == (black, white)


def test_score_matches_pairing_by_hand_on_random_codes() -> None:
    rng = random.Random(1)
    for _ in range(3000):
        n, k = rng.randint(1, 9), rng.randint(2, 8)
        secret, guess = ([rng.randrange(k) for _ in range(n)] for _ in range(2))
        assert mm.score(secret, guess) == paired_score(secret, guess)


def test_feedback_classes_in_bulk_match_score() -> None:
    rng = random.Random(2)
    codes = [tuple(rng.randrange(7) for _ in range(6)) for _ in range(300)]
    guess = codes[0]
    classes = _Targets(codes, 7).classes(guess)
    assert classes == [_feedback_class(6, *mm.score(code, guess)) for code in codes]


# -- guess -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k", "turns"), [(4, 6, 3), (5, 3, 4), (6, 6, 5), (10, 6, 6), (16, 8, 5)])
def test_consistent_strategy_guesses_a_code_that_fits(n: int, k: int, turns: int) -> None:
    rng = random.Random(n * 100 + k)
    for _ in range(6):
        _, history = random_history(rng, n, k, turns)
        result = ask({"n": n, "k": k, "history": history, "strategy": "consistent"})
        assert result["status"] == "ok" and result["strategy"] == "consistent"
        assert len(result["guess"]) == n and all(0 <= c < k for c in result["guess"])
        assert result["consistent"] is True and fits(result["guess"], history)


@pytest.mark.parametrize(("n", "k"), [(4, 6), (3, 5), (5, 4)])
def test_remaining_is_the_brute_force_count_in_small_spaces(n: int, k: int) -> None:
    rng = random.Random(k)
    for strategy in mm.STRATEGIES:
        _, history = random_history(rng, n, k, 2)
        result = ask({"n": n, "k": k, "history": history, "strategy": strategy})
        expected = brute_force_remaining(n, k, history)
        assert result["remaining"] == result["remaining_at_least"] == expected
        assert result["consistent"] == fits(result["guess"], history)


def test_best_in_a_large_space_returns_a_code_and_an_honest_flag() -> None:
    rng = random.Random(5)
    for _ in range(3):
        _, history = random_history(rng, 10, 6, 4)
        result = ask({"n": 10, "k": 6, "history": history})
        assert result["status"] == "ok" and len(result["guess"]) == 10
        assert result["consistent"] == fits(result["guess"], history)
        assert result["remaining"] is None or result["remaining"] == result["remaining_at_least"]
        assert result["remaining_at_least"] >= 1


def test_minimax_opens_with_a_worst_case_of_256_like_knuth() -> None:
    result = ask({"n": 4, "k": 6, "strategy": "minimax"})
    assert result["guess"] == [0, 0, 1, 1]
    sizes = Counter(mm.score(code, result["guess"]) for code in itertools.product(range(6), repeat=4))
    assert max(sizes.values()) == 256


def test_minimax_falls_back_to_best_in_large_spaces_and_says_so() -> None:
    result = ask({"n": 7, "k": 6, "strategy": "minimax"})
    assert result["strategy"] == "best" and "minimax" in result["note"]


def test_a_contradiction_names_a_minimal_set_of_entries() -> None:
    history = [
        {"guess": [0, 1, 2, 3], "black": 0, "white": 0},  # no 0, 1, 2 or 3 anywhere
        {"guess": [4, 4, 5, 5], "black": 1, "white": 0},
        {"guess": [0, 0, 0, 0], "black": 1, "white": 0},  # one 0, against the first
    ]
    for strategy in mm.STRATEGIES:
        result = ask({"n": 4, "k": 6, "history": history, "strategy": strategy})
        assert result["status"] == "contradiction" and result["guess"] is None
        assert result["error"]["code"] == 422 and result["error"]["entries"] == [0, 2]
        assert "#0" in result["error"]["message"] and "#2" in result["error"]["message"]


def test_a_contradiction_in_a_large_space_is_a_result_too() -> None:
    history = [
        {"guess": [0] * 12, "black": 3, "white": 0},
        {"guess": [1] * 12, "black": 4, "white": 0},
        {"guess": [0] * 6 + [1] * 6, "black": 0, "white": 8},  # 3 zeros + 4 ones pair into 7, not 8
    ]
    result = ask({"n": 12, "k": 6, "history": history})
    assert result["status"] == "contradiction" and result["error"]["entries"] == [0, 1, 2]


def test_an_entry_that_cannot_happen_alone_is_a_contradiction() -> None:
    result = ask({"n": 4, "k": 6, "history": [{"guess": [0, 1, 2, 3], "black": 3, "white": 1}]})
    assert result["status"] == "contradiction" and result["error"]["entries"] == [0]


def test_a_history_holding_the_secret_is_solved() -> None:
    history = [
        {"guess": [0, 0, 1, 1], "black": 2, "white": 0},
        {"guess": [0, 2, 3, 1], "black": 4, "white": 0},
    ]
    result = ask({"n": 4, "k": 6, "history": history})
    assert (result["status"], result["guess"], result["remaining"]) == ("solved", [0, 2, 3, 1], 1)
    history[0]["white"] = 1  # no longer fits the solved code
    assert ask({"n": 4, "k": 6, "history": history})["status"] == "contradiction"


def test_a_32_by_20_guess_with_a_short_history_fits_within_its_time_limit() -> None:
    """Its time limit is the behaviour asserted (a run past it raises TimeLimitExceeded); how fast it is
    belongs to bench/mastermind.py."""
    rng = random.Random(32)
    _, history = random_history(rng, 32, 20, 2)
    result = ask({"n": 32, "k": 20, "history": history, "samples": 100}, time_limit=15)
    assert result["status"] == "ok" and result["consistent"] and fits(result["guess"], history)


def test_the_same_params_give_the_same_guess() -> None:
    _, history = random_history(random.Random(8), 12, 6, 3)
    first, second = (ask({"n": 12, "k": 6, "history": history, "seed": 4}) for _ in range(2))
    assert first["guess"] == second["guess"]


@pytest.mark.parametrize(("n", "k"), [(6, 4), (7, 3), (5, 5), (4, 6)])
def test_the_split_counts_lists_and_samples_exactly_the_codes_that_fit(n: int, k: int) -> None:
    rng = random.Random(n * 7 + k)
    for turns in (1, 2, 3, 4):
        _, history = random_history(rng, n, k, turns)
        expected = [code for code in itertools.product(range(k), repeat=n) if fits(list(code), history)]
        split = _Split(n, k, mm.history_of({"history": history}), Run())
        assert split.count == len(expected) and split.codes() == expected
        assert all(fits(list(code), history) for code in split.sample(random.Random(turns), 300))


@pytest.mark.slow
def test_exact_count_lists_small_spaces_splits_larger_ones_and_gives_up_beyond() -> None:
    rng = random.Random(21)
    for n, k in ((3, 4), (8, 6)):  # listed (64 codes); met in the middle (6**8 > ENUM_LIMIT)
        _, history = random_history(rng, n, k, 2)
        every_code = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int8)
        expected = int(_fitting(every_code, mm.history_of({"history": history}), k).sum())
        assert mm.exact_count(n, k, mm.history_of({"history": history}), Run()) == expected > 0
    _, history = random_history(rng, 24, 6, 2)
    assert mm.exact_count(24, 6, mm.history_of({"history": history}), Run()) is None


def test_the_end_game_prefers_fewer_expected_turns_then_a_guess_that_may_win() -> None:
    history = mm.history_of({"history": [{"guess": [0, 0, 1, 1], "black": 2, "white": 0}]})
    targets = np.array([[0, 0, 2, 2], [0, 2, 1, 2], [2, 2, 1, 1]], dtype=np.int8)
    assert _fitting(targets, history, 3).all()
    # parts of two and one; of one each and fits; of one each but does not fit
    candidates = np.array([[0, 0, 1, 2], [0, 0, 2, 2], [0, 0, 2, 1]], dtype=np.int8)
    classes = _classes_matrix(candidates, targets, 3)
    assert [len(set(row)) for row in classes.tolist()] == [2, 3, 3]
    assert _fitting(candidates, history, 3).tolist() == [False, True, False]
    best, (turns, fits) = _split_pick(candidates, targets, history, "turns", 3)
    # a part of one needs one more turn, except the guess's own part when the guess is the secret
    assert (best, fits) == (1, True) and turns == pytest.approx(-(3 - 1) / 3)
    assert _split_pick(candidates[[0, 2]], targets, history, "turns", 3)[0] == 1  # 1 turn < 4/3
    assert _turns_to_finish(np.array([1, 2, 3, 6])).tolist() == pytest.approx([1, 1.5, 2, 2.6])


def test_split_samples_are_uniform() -> None:
    history = mm.history_of({"history": [{"guess": [0, 0, 1, 1, 2, 2], "black": 2, "white": 2}]})
    split = _Split(6, 4, history, Run())
    draws = 40_000
    counts = Counter(split.sample(random.Random(3), draws))
    assert len(counts) == split.count == len(_consistent_codes(6, 4, history)) > 50
    mean = draws / split.count
    # each code's draws are binomial: a biased sampler (say by group pair, not by code) lands far outside
    assert max(abs(c - mean) for c in counts.values()) < 5 * math.sqrt(mean)


@pytest.mark.slow
def test_best_at_16_by_6_counts_the_remaining_codes_exactly() -> None:
    rng = random.Random(16)
    _, history = random_history(rng, 16, 6, 9)
    with Run(60) as run:
        codes, complete = _sat_sample(
            16, 6, mm.history_of({"history": history}), 5000, random.Random(0), _Session(run)
        )
    assert complete
    result = ask({"n": 16, "k": 6, "history": history})
    assert result["remaining"] == result["remaining_at_least"] == len(codes)
    assert result["consistent"] == fits(result["guess"], history)


# -- play --------------------------------------------------------------------------------------------------


def assert_games_are_true(games: list[dict], n: int) -> None:
    for game in games:
        assert game["solved"] and game["turns"] == len(game["guesses"])
        assert game["guesses"][-1]["guess"] == game["secret"]
        for turn in game["guesses"]:
            assert paired_score(game["secret"], turn["guess"]) == (turn["black"], turn["white"])
        assert all(turn["black"] < n for turn in game["guesses"][:-1])


@pytest.mark.slow
@pytest.mark.parametrize("strategy", mm.STRATEGIES)
def test_games_over_sampled_4x6_secrets_all_end_on_the_secret(strategy: str) -> None:
    params = {"n": 4, "k": 6, "strategy": strategy, "secrets": {"sample": 60, "seed": 3}, "seed": 0}
    with Run(120) as run:
        summaries = [mm.run_shard(params, key, run).summary for key in mm.plan(params, run)]
    result = mm.combine(params, summaries)
    assert result["games_count"] == 60 and result["unsolved"] == 0
    assert [game["index"] for game in result["games"]] == list(range(60))
    assert_games_are_true(result["games"], 4)
    assert sum(result["turn_histogram"].values()) == 60
    assert result["max_turns"] <= {"minimax": 5, "best": 6, "consistent": 9, "optimal": 6}[strategy]
    assert result["avg_turns"] == pytest.approx(sum(g["turns"] for g in result["games"]) / 60)


def test_larger_games_are_solved_with_true_feedback() -> None:
    params = {"n": 8, "k": 6, "secrets": {"sample": 3, "seed": 1}, "samples": 24}
    with Run(120) as run:
        games = mm.run_shard(params, "0:3", run).summary["games"]
    assert_games_are_true(games, 8)


def test_shards_are_sized_by_the_measured_cost_of_a_game() -> None:
    def shards(n: int, strategy: str, secrets: object) -> int:
        return len(mm.plan({"n": n, "k": 6, "strategy": strategy, "secrets": secrets}, Run()))

    assert shards(4, "best", "all") == 3  # 1296 games of ~8 ms: 625 to a shard of ~5 s
    assert shards(16, "best", {"sample": 3, "seed": 1}) == 3  # ~7 s a game
    assert shards(16, "consistent", {"sample": 12, "seed": 1}) == 3  # ~1 s a game
    assert shards(32, "best", {"sample": 2, "seed": 1}) == 2


@pytest.mark.slow
def test_shards_combined_equal_play_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(games, "SHARD_SECONDS", 0.3)  # small shards, so that there are several
    params = {"n": 5, "k": 3, "strategy": "consistent", "secrets": "all", "seed": 0}
    with Run(120) as run:
        keys = mm.plan(params, run)
        by_hand = mm.combine(params, [mm.run_shard(params, key, run).summary for key in reversed(keys)])
        in_process = mm.play(params, run)
    assert len(keys) >= 2 and by_hand["games_count"] == 3**5
    assert without_seconds(by_hand["games"]) == without_seconds(in_process["games"])
    assert by_hand["avg_turns"] == in_process["avg_turns"]
    assert by_hand["turn_histogram"] == in_process["turn_histogram"]


def test_a_rerun_shard_plays_the_same_games() -> None:
    params = {"n": 10, "k": 6, "secrets": {"sample": 2, "seed": 9}, "samples": 16}
    runs = []
    for _ in range(2):
        with Run(120) as run:
            runs.append(without_seconds(mm.run_shard(params, "0:2", run).summary["games"]))
    assert runs[0] == runs[1]


def test_secrets_are_listed_every_code_or_a_seeded_distinct_sample() -> None:
    assert mm.secrets_of({"n": 2, "k": 3, "secrets": "all"})[:4] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    assert mm.secrets_of({"n": 2, "k": 3, "secrets": [[2, 1]]}) == [(2, 1)]
    sample = mm.secrets_of({"n": 16, "k": 6, "secrets": {"sample": 50, "seed": 5}})
    assert len(set(sample)) == 50 and sample == mm.secrets_of(
        {"n": 16, "k": 6, "secrets": {"sample": 50, "seed": 5}}
    )
    assert sorted(mm.secrets_of({"n": 2, "k": 3, "secrets": {"sample": 9, "seed": 1}})) == mm.secrets_of(
        {"n": 2, "k": 3, "secrets": "all"}
    )


def test_a_game_that_runs_out_of_turns_is_unsolved() -> None:
    params = {"n": 4, "k": 6, "strategy": "consistent", "secrets": [[5, 4, 3, 2]], "max_turns": 1}
    with Run(60) as run:
        result = mm.combine(params, [mm.run_shard(params, "0:1", run).summary])
    assert result["unsolved"] == 1 and result["games"][0]["turns"] == 1 and result["turn_histogram"] == {}


def test_cancel_from_another_thread_stops_a_long_play_shard() -> None:
    params = {"n": 16, "k": 6, "secrets": {"sample": 50, "seed": 1}}
    with Run(120) as run:
        threading.Timer(1.0, run.stop).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            mm.run_shard(params, "0:50", run)
    assert time.monotonic() - started < 4
