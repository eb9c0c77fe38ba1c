"""Planet X game simulation: games end with Planet X located, replay the same, and the seed's survey-only
strategy lands near its published ~30 days while the goal policy needs clearly fewer."""

import statistics
import threading
import time

import numpy as np
import pytest

from puzzles.planetx import simulate
from puzzles.planetx.actions import LOCATE_DAYS
from puzzles.runtime import Cancelled, Run


def games(policy: str, count: int, seed: int = 3) -> dict:
    """Games as the seed played them: no conference clues."""
    params = {"mode": "standard", "games": count, "seed": seed, "policy": policy, "conferences": False}
    with Run(600) as run:
        summaries = [simulate.run_shard(params, key, run).summary for key in simulate.plan(params, run)]
    return simulate.combine(params, summaries)


@pytest.fixture(scope="module")
def survey_only() -> dict:
    return games("survey-only", 1000)


@pytest.mark.slow
def test_survey_only_reproduces_the_seeds_thirty_days(survey_only: dict) -> None:
    assert survey_only["games"] == 1000 and survey_only["unfinished"] == 0
    assert 26 <= survey_only["avg_days"] <= 34
    assert set(survey_only["action_mix"]) == {"survey", "locate"}  # no targets for the seed's strategy


@pytest.mark.slow
def test_the_goal_policy_needs_clearly_fewer_days(survey_only: dict) -> None:
    goal = games("goal", 1000)
    assert goal["unfinished"] == 0
    assert goal["avg_days"] < survey_only["avg_days"] - 3
    assert goal["action_mix"].get("target", 0) > 0


def test_every_game_ends_by_locating_the_true_planet_x() -> None:
    result = games("entropy", 40, seed=9)
    for game in result["sample"]:
        assert game["found"] and game["mix"]["locate"] == game["wrong_locates"] + 1
        assert game["days"] >= LOCATE_DAYS
    days = [int(d) for d, n in result["days_histogram"].items() for _ in range(n)]
    assert result["median_days"] == statistics.median(days) and result["max_days"] == max(days)


def test_shards_replay_the_same_games() -> None:
    params = {"mode": "standard", "games": 30, "seed": 5, "policy": "goal", "games_per_shard": 7}
    with Run(120) as run:
        keys = simulate.plan(params, run)
        assert keys == ["0:7", "7:14", "14:21", "21:28", "28:30"]
        first = [simulate.run_shard(params, key, run).summary for key in keys]
        again = simulate.run_shard(params, "7:14", run).summary
    strip = lambda games: [{k: v for k, v in g.items() if k != "seconds"} for g in games]  # noqa: E731
    assert strip(again["games"]) == strip(first[1]["games"])
    assert simulate.combine(params, first)["games"] == 30


def test_cancel_stops_a_simulation() -> None:
    params = {"mode": "standard", "games": 5000, "policy": "survey-only", "seed": 77}
    with Run(60) as run:
        threading.Timer(0.5, run.stop).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            simulate.run_shard(params, "0:5000", run)
    assert time.monotonic() - started < 3


def test_the_research_policy_counts_what_an_action_tells_about_the_board() -> None:
    """Where the bits about the whole board change the ranking, `research` follows them: a topic by its
    bits about the triple + RESEARCH_BOARD_WEIGHT × its bits about the board, a survey or target by the
    same with ACTION_BOARD_WEIGHT, per day; `goal` still ranks by bits about the triple alone."""
    from puzzles.planetx.actions import Research, legal_actions, research_actions, score
    from puzzles.planetx.board import MODES
    from puzzles.planetx.boardset import all_boards

    mode = MODES["standard"]
    with Run(120) as run:
        everything = all_boards(mode, run)
    seen = {"research": False, "survey": False}
    for seed in range(40):
        game = simulate.new_game(everything, seed * 7919 % len(everything), "research", [seed], [])
        boards = simulate._start(game, everything)
        _, counts = boards.triple_counts()
        topics = research_actions(game.topics(boards), set(), False)
        surveys = legal_actions(mode, 1 + seed % mode.sectors)
        for actions, weight, days in (
            (topics, simulate.RESEARCH_BOARD_WEIGHT, 1.0),
            (surveys, simulate.ACTION_BOARD_WEIGHT, np.array([a.days for a in surveys], dtype=float)),
        ):
            scores = score(boards, actions)
            by_goal = int(np.argmax(np.round(scores.goal_bits / days, 12)))
            by_worth = int(np.argmax(np.round((scores.goal_bits + weight * scores.bits) / days, 12)))
            if by_goal == by_worth or simulate.locate_now(counts, float((scores.goal_bits / days).max())):
                continue
            assert simulate.choose("research", boards, actions, counts) is actions[by_worth]
            if not isinstance(actions[0], Research):
                assert simulate.choose("goal", boards, actions, counts) is actions[by_goal]
            seen["research" if isinstance(actions[0], Research) else "survey"] = True
        if all(seen.values()):
            break
    assert all(seen.values()), seen


def test_cancel_stops_a_games_set_up() -> None:
    """Dealing a game's clues and weighing its start are numpy over every board (at expert, long) before
    the first day: their masks are checkpoints of the run."""
    from puzzles.planetx.board import MODES
    from puzzles.planetx.boardset import BoardSet, all_boards

    def fresh() -> BoardSet:  # a set of its own: nothing of it in the clues' caches yet
        return BoardSet.from_codes(MODES["standard"], everything.codes, source="enumerated")

    with Run(120) as run:
        everything = all_boards(MODES["standard"], run)
        game = simulate.new_game(fresh(), 0, "research", [1], [])
    with Run(120) as run:
        run.stop()
        with pytest.raises(Cancelled):
            simulate.new_game(fresh(), 0, "research", [1], [])
        with pytest.raises(Cancelled):
            simulate._start(game, fresh())


def test_a_decider_changes_one_move_and_the_game_plays_on() -> None:
    """`play(decider=...)` lets a study change a move: here the first decision becomes a locate of the
    likeliest triple; the game records how likely the player found each guess, and whether it was right,
    and still ends on the true Planet X."""
    from puzzles.planetx.actions import AnyAction
    from puzzles.planetx.board import MODES
    from puzzles.planetx.boardset import BoardSet, all_boards

    def locate_first(
        policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray
    ) -> AnyAction | str:
        return simulate.LOCATE if not game.moves else simulate.decide(policy, game, boards, counts)

    with Run(120) as run:
        everything = all_boards(MODES["standard"], run)
        game = {"seeds": [1, 5], "spaces": [10]}
        own = simulate.play(everything, 5, "research", run, **game)
        changed = simulate.play(everything, 5, "research", run, **game, decider=locate_first)
    assert own["moves"][0]["type"] == "research"
    first = changed["moves"][0]
    assert first["type"] == "locate" and first["right"] is False and 0 < first["chance"] < 0.05
    assert changed["found"] and changed["wrong_locates"] >= 1
    last = changed["moves"][-1]
    assert last["type"] == "locate" and last["right"] is True


def test_the_policy_prefers_what_it_chooses() -> None:
    """`preference` orders the actions as `choose` picks: its first is the move, research first while the
    rules allow it."""
    from puzzles.planetx.actions import Research, score
    from puzzles.planetx.board import MODES
    from puzzles.planetx.boardset import all_boards

    with Run(120) as run:
        everything = all_boards(MODES["standard"], run)
    for seed in range(5):
        game = simulate.new_game(everything, seed * 101, "research", [seed], [])
        boards = simulate._start(game, everything)
        actions = simulate.candidates("research", game, boards)
        order = simulate.preference("research", score(boards, actions), actions)
        assert sorted(order) == list(range(len(actions)))
        topics = sum(isinstance(a, Research) for a in actions)
        assert topics == 6 and all(isinstance(actions[j], Research) for j in order[:topics])
        _, counts = boards.triple_counts()
        assert simulate.choose("research", boards, actions, counts) is actions[order[0]]
