"""bench/mastermind.py --secrets spaced plays exactly the seed's test set."""

import statistics

import pytest

from bench.mastermind import spaced_secrets


def _digits(value: int, n: int) -> list[int]:
    """value as a base-6 digit string of length n, most significant digit first (the seed's format)."""
    text = ""
    for _ in range(n):
        value, digit = divmod(value, 6)
        text = str(digit) + text
    return [int(char) for char in text]


def test_spaced_secrets_are_the_seeds_evenly_spaced_codes() -> None:
    codes = spaced_secrets(16)
    assert len(codes) == 1000
    assert codes == [_digits(i * 6**16 // 1000, 16) for i in range(1000)]
    assert codes[0] == [0] * 16
    assert codes[200] == [1] * 16 and codes[500] == [3] + [0] * 15  # 6¹⁶/5 = 11…1₆, 6¹⁶/2 = 30…0₆
    assert len({tuple(code) for code in codes}) == 1000


def test_every_mth_of_the_spaced_secrets() -> None:
    every20 = spaced_secrets(16, every=20)
    assert len(every20) == 50
    assert every20 == spaced_secrets(16)[::20]
    assert every20[1] == _digits(20 * 6**16 // 1000, 16) == [int(c) for c in "0041530415304153"]


def test_the_confidence_interval_is_none_when_every_secret_is_played() -> None:
    from bench.mastermind import confidence

    assert confidence([4, 5, 6], every=True) is None
    turns = [4, 5] * 50
    assert confidence(turns, every=False) == 1.96 * statistics.stdev(turns) / 10


def test_a_published_row_shows_the_figures_beside_the_published_ones_and_the_optimum() -> None:
    from bench.mastermind import OPTIMUM, PUBLISHED, PUBLISHED_SOURCE, published_row

    assert "mikemag/Mastermind" in PUBLISHED_SOURCE and OPTIMUM[(4, 6)] == (5625, 1296, "Koyama & Lai 1993")
    assert PUBLISHED[(5, 8)]["Entropy"] == 5.4856
    games = [{"turns": 5, "seconds": 0.5}, {"turns": 6, "seconds": 0.25}]
    row = published_row(5, 8, "best", games, every=False, ratio=0.99)
    assert "5.5000" in row and "0.3750" in row and "0.9900" in row
    assert "Entropy 5.4856 (+0.0144)" in row
    row = published_row(4, 6, "optimal", games, every=True, ratio=None)
    assert "exact" in row and "Most Parts 4.3735" in row and "4.3403 (Koyama & Lai 1993)" in row
    # a size zolve's search stored: its own optimum
    assert "(zolve's search)" in published_row(3, 4, "optimal", games, every=True, ratio=None)


def test_the_published_line_lists_every_published_figure_best_first() -> None:
    from bench.mastermind import published_line

    line = published_line(8, 6)
    assert line.startswith("8x6: published Entropy 6.1951, Most Parts 6.2755")
    assert line.endswith("optimum not known")
    assert "optimum 4.3403 (Koyama & Lai 1993)" in published_line(4, 6)


def test_a_partial_row_of_every_secret_claims_no_exact_average() -> None:
    from bench.mastermind import published_row

    games = [{"turns": 4, "seconds": 0.1}] * 3
    assert "exact" not in published_row(4, 6, "best", games, every=True, ratio=None, partial="  (so far)")


def test_all_secrets_walks_every_secret_in_processes_and_saves_the_turns(tmp_path, capsys) -> None:
    """--all-secrets at 4×6 (cut one guess down, two processes): the exact totals of best and optimal, the
    turns saved per secret in all_codes order."""
    import numpy as np

    from bench.mastermind import run_all_secrets
    from puzzles import mastermind as mm

    run_all_secrets([(4, 6)], ["best", "optimal"], processes=2, depth=1, turns_out=str(tmp_path))
    out = capsys.readouterr().out
    assert "4x6   best          1,296  4.3472" in out and "(total 5,634;" in out
    assert "4x6   optimal       1,296  4.3403" in out and "(total 5,625;" in out
    turns = np.load(tmp_path / "turns_4x6_best.npy")
    opening = mm.decide(4, 6, (), "best").guess
    assert int(turns.sum()) == 5_634
    assert np.flatnonzero(turns == 1).tolist() == [mm.all_codes(4, 6).index(opening)]


@pytest.mark.slow
def test_the_tuning_secrets_are_the_tuning_seeds_first_secrets() -> None:
    from bench.mastermind import TUNING_COUNT, TUNING_SEEDS, tuning_secrets
    from puzzles import mastermind as mm

    codes = mm.all_codes(5, 8)
    seeds = set()
    for seed in TUNING_SEEDS:
        sample = mm.secrets_of({"n": 5, "k": 8, "secrets": {"sample": TUNING_COUNT, "seed": seed}})
        seeds |= {codes.index(tuple(code)) for code in sample}
    assert set(tuning_secrets(5, 8).tolist()) == seeds  # 5×8 chose no end game on subtrees


@pytest.mark.slow
def test_tuning_subtrees_come_from_the_tree_before_and_todays_constants_come_back(monkeypatch) -> None:
    """The subtrees three guesses down of the tree of the code before (its end game's constants), drawn
    with Random(11); today's constants and third-turn decisions are back afterwards. At 4×5: the size sets
    only how long the walk takes."""
    import random

    import numpy as np

    from bench import mastermind as bench
    from puzzles.mastermind import stronger
    from puzzles.mastermind.every import Walker
    from puzzles.runtime import Run

    monkeypatch.setattr(bench, "TUNING_SUBTREES", {(4, 5): 40})
    monkeypatch.setattr(bench, "STRONGER_BEFORE", {"ENDGAME": 3, "PREVIOUS_ENDGAME": 70, "EXTRA": 200})
    monkeypatch.setattr(stronger, "_THIRD", {("a", "marker"): "kept"})  # this test's own decisions only
    before = {name: getattr(stronger, name) for name in ("ENDGAME", "PREVIOUS_ENDGAME", "EXTRA")}
    drawn = bench.tuning_subtrees(4, 5)
    assert {name: getattr(stronger, name) for name in before} == before
    assert stronger._THIRD.pop(("a", "marker")) == "kept"
    with monkeypatch.context() as patched, Run() as run:
        patched.setattr(stronger, "ENDGAME", 3)
        patched.setattr(stronger, "EXTRA", 200)
        nodes = Walker(4, 5, "best", 0, run).subtrees(3, np.zeros(5**4, dtype=np.int8))
    picked = random.Random(11).sample(range(len(nodes)), 40)
    assert drawn.tolist() == np.concatenate([nodes[i][1] for i in picked]).tolist()


@pytest.mark.slow
def test_tuning_parts_are_a_seeded_sample_of_the_large_subtrees(monkeypatch) -> None:
    """TUNING_PARTS: Random(seed).sample of the subtrees three guesses down that hold more than `above`
    codes, their secrets in order (they stand in for TUNING_SUBTREES at their size)."""
    import random

    import numpy as np

    from bench import mastermind as bench
    from puzzles.mastermind.every import Walker
    from puzzles.runtime import Run

    monkeypatch.setattr(bench, "TUNING_PARTS", {(5, 6): (6, 20, 3)})
    monkeypatch.setattr(bench, "TUNING_SUBTREES", {(5, 6): 40})
    drawn = bench.tuning_subtrees(5, 6)
    with Run() as run:
        nodes = Walker(5, 6, "best", 0, run).subtrees(3, np.zeros(6**5, dtype=np.int8))
    large = [index for index, node in enumerate(nodes) if len(node[1]) > 20]
    picked = sorted(random.Random(3).sample(large, 6))
    assert len(large) > 6 and all(len(nodes[index][1]) > 20 for index in picked)
    assert drawn.tolist() == np.concatenate([nodes[index][1] for index in picked]).tolist()
