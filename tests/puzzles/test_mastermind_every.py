"""Every secret at once (puzzles.mastermind.every): walking a strategy's decision tree gives each secret the
turns that playing it game by game gives."""

import numpy as np
import pytest

from puzzles import mastermind as mm
from puzzles.mastermind import every
from puzzles.runtime import Run


def _played(n: int, k: int, strategy: str, secrets: list[tuple[int, ...]]) -> list[int]:
    params = {"n": n, "k": k, "strategy": strategy, "seed": 0, "secrets": [list(s) for s in secrets]}
    with Run() as run:
        return [game["turns"] for game in mm.play(params, run)["games"]]


@pytest.mark.slow
@pytest.mark.parametrize("strategy, total", [("best", 5_634), ("optimal", 5_625)])
def test_the_walk_gives_every_4x6_secret_the_turns_of_its_game(strategy: str, total: int) -> None:
    turns = every.every_secret(4, 6, strategy)
    assert turns.tolist() == _played(4, 6, strategy, list(mm.all_codes(4, 6)))
    # best: the most parts, then the exact end game from 120 codes (4.3472; Most Parts alone 4.3735); the
    # optimum 4.3403
    assert int(turns.sum()) == total


@pytest.mark.slow
def test_a_walked_5x8_subtree_matches_its_secrets_played_one_by_one() -> None:
    """The engine sizes (opening book, middle game, exact end game): the walk of the subtrees two guesses
    down, against games of the secrets in three of them."""
    turns = np.zeros(8**5, dtype=np.int8)
    with Run() as run:
        walker = every.Walker(5, 8, "best", 0, run)
        nodes = walker.subtrees(2, turns)
        won_early = np.flatnonzero(turns)
        assert len(nodes) > 3 and sum(len(s) for _, s in nodes) + len(won_early) == 8**5
        picked = sorted(nodes, key=lambda node: len(node[1]))[len(nodes) // 2 : len(nodes) // 2 + 3]
        for node in picked:
            walker.walk(node, turns)
    secrets = np.concatenate([s for _, s in picked] + [won_early])
    codes = [mm.code_at(int(i), 5, 8) for i in secrets]
    assert turns[secrets].tolist() == _played(5, 8, "best", codes)
