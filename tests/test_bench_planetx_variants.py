"""bench/planetx_variants.py: the policy studies play whole games, change moves where they say they do,
and the bench pairs them with the policy game by game."""

from typing import Any

import numpy as np
import pytest

from bench import planetx_variants
from bench.planetx_variants import (
    STUDIES,
    clue_chances,
    compare,
    locate_by_clue,
    played,
    two_step,
    wait_for_conference,
)
from puzzles.planetx import clues, generators, simulate
from puzzles.planetx.actions import Action
from puzzles.planetx.board import MODES
from puzzles.planetx.boardset import BoardSet, all_boards
from puzzles.planetx.observations import parse
from puzzles.runtime import Run

SEED = 31


def play_standard(index: int, decider: simulate.Decider, space: int = 10) -> dict[str, Any]:
    with Run(600) as run:
        everything = all_boards(MODES["standard"], run)
        secret = simulate.secret_of({"seed": SEED}, index, len(everything))
        seeds = [SEED, index]
        return simulate.play(everything, secret, "research", run, 300, seeds, [space], decider=decider)


@pytest.mark.parametrize("study", sorted(STUDIES))
def test_each_study_finds_planet_x(study: str) -> None:
    days, wrong, seconds = played(("standard", "uniform", SEED, 0, study))
    assert 5 <= days < 300 and wrong >= 0 and seconds > 0


def test_the_two_step_study_changes_some_surveys_and_only_surveys_or_targets() -> None:
    changed: list[tuple[Any, Any]] = []

    def watching(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
        own = simulate.decide(policy, game, boards, counts)
        move = two_step(policy, game, boards, counts)
        if move != own:
            changed.append((own, move))
        return move

    for index in range(8):
        assert play_standard(index, watching)["found"]
    assert changed, "eight games and the look-ahead never chose another survey or target"
    assert all(isinstance(own, Action) and isinstance(move, Action) for own, move in changed)


@pytest.mark.parametrize("decider", [simulate.decide, wait_for_conference], ids=["policy", "study"])
def test_no_unsure_locate_just_before_a_conference(decider: simulate.Decider) -> None:
    """The policy locates unsure days before a late conference (day 14); the study does not."""
    unsure_before: list[int] = []

    def watching(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
        move = decider(policy, game, boards, counts)
        pending = game.conferences_heard < len(game.conferences)
        due = game.conferences[game.conferences_heard][0] - game.days if pending else None
        soon = due is not None and due <= planetx_variants.WAIT_DAYS
        if move == simulate.LOCATE and soon and counts[0] / counts.sum() < planetx_variants.WAIT_BELOW:
            unsure_before.append(game.days)
        return move

    for index in range(12):
        assert play_standard(index, watching, space=15)["found"]
    assert bool(unsure_before) == (decider is simulate.decide)


def test_locating_by_the_clue_to_come_holds_back_only_locates_before_a_conference() -> None:
    changed: list[tuple[Any, Any, bool]] = []

    def watching(policy: str, game: simulate.Game, boards: BoardSet, counts: np.ndarray) -> Any:
        own = simulate.decide(policy, game, boards, counts)
        move = locate_by_clue(policy, game, boards, counts)
        if move != own:
            changed.append((own, move, game.conferences_heard < len(game.conferences)))
        return move

    for index in range(12):
        assert play_standard(index, watching, space=15)["found"]
    assert changed, "twelve games with a late conference and every locate before it kept"
    assert all(own == simulate.LOCATE and move != simulate.LOCATE and due for own, move, due in changed)


def test_what_the_clue_to_come_tells_about_the_triple() -> None:
    triples, weights = np.array([1, 1, 2, 2]), np.ones(4)
    telling = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]])  # statements × boards
    assert planetx_variants._clue_bits(telling, triples, weights) == pytest.approx((1.0, 1.0))
    either = np.full((2, 4), 0.5)  # read whatever the board: tells nothing
    assert planetx_variants._clue_bits(either, triples, weights) == pytest.approx((1.0, 0.0))
    learn = planetx_variants._learn_days
    assert learn(2.0, 1.0, 10, 0.5) == pytest.approx(4.0)  # learnt before the clue comes
    assert learn(2.0, 1.0, 1, 0.5) == pytest.approx(2.0)  # the clue's bit saves two days
    assert learn(2.0, 1.9, 3, 0.5) == pytest.approx(3.0)  # no sooner than the clue comes
    assert learn(2.0, 1.0, -4, 0.5) == pytest.approx(2.0)  # heard already: what it leaves


def test_the_bench_pairs_every_study_with_the_policy(capsys: pytest.CaptureFixture[str]) -> None:
    compare("standard", "uniform", SEED, 3, ["sky-reach", "wait-for-conference"])
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[2:]}
    assert set(rows) == {"sky-reach", "wait-for-conference"}
    policy_days = [played(("standard", "uniform", SEED, i, ""))[0] for i in range(3)]
    assert float(rows["sky-reach"][1]) == pytest.approx(np.mean(policy_days), abs=0.005)


def test_the_next_clue_chances_are_the_uniform_generators_own() -> None:
    """Per board, the chance each statement is read first (and, given a first, second) is what the
    uniform model's likelihood of that clue says, and they add up to 1."""
    with Run(600) as run:
        everything = all_boards(MODES["standard"], run)
    model = generators.MODELS["uniform"]
    statements = clues.conference_topic(everything).statements
    first = clue_chances(everything, [], 2)
    np.testing.assert_allclose(first.sum(axis=0), 1.0, atol=1e-5)
    for k in (0, 7, 20):
        expected = model.conference_likelihood(everything, [statements[k]], 2)
        assert expected is not None
        np.testing.assert_allclose(first[k], expected, atol=1e-6)
    x1 = statements[int(np.argmax(first.sum(axis=1)))]
    boards = everything.subset(parse(everything.mode, x1).mask(everything.mode, everything.grid))
    second = clue_chances(boards, [x1], 2)
    np.testing.assert_allclose(second.sum(axis=0), 1.0, atol=1e-5)
    alone = model.conference_likelihood(boards, [x1], 2)
    assert alone is not None
    read_first = np.asarray(alone > 0)  # the boards where the game could read it first
    boards, second, alone = boards.subset(read_first), second[:, read_first], alone[read_first]
    for k in range(len(statements)):
        if statements[k] != x1 and second[k].any():
            both = model.conference_likelihood(boards, [x1, statements[k]], 2)
            assert both is not None
            np.testing.assert_allclose(second[k], both / alone, atol=1e-6)
