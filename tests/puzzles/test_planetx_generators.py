"""How games deal their clues (issue 53): the weighted generator keeps EluvK/planetx_server's rules and draws
as its weights say, the chance of a deal in closed form matches how often it is dealt, a player weighing
both models keeps the hidden board and learns which dealt the game, and starting facts by difficulty are
true, on distinct sectors, and shorten games."""

from __future__ import annotations

from collections import Counter
from math import perm

import numpy as np
import pytest

from puzzles.planetx import generators, simulate, starting
from puzzles.planetx.board import ASTEROID, MODES, OBJECTS
from puzzles.planetx.boardset import BoardSet
from puzzles.planetx.clues import _impostors, draw_statement
from puzzles.planetx.generators import MODELS, PAIRS, Streams, pair_allowed
from puzzles.planetx.observations import parse
from puzzles.planetx.rules import enumerate_boards
from puzzles.runtime import Run
from schemas import planetx as schema
from tests.puzzles.test_planetx_clues import holds, letters_of

STANDARD = MODES["standard"]
WEIGHTED = MODELS["weighted"]


@pytest.fixture(scope="module")
def standard() -> BoardSet:
    return BoardSet.from_codes(STANDARD, enumerate_boards(STANDARD))


def streams(seed: int) -> Streams:
    return Streams(np.random.default_rng([seed, 1]), np.random.default_rng([seed, 2]))


def test_the_weighted_generator_keeps_its_rules_and_deals_only_true_clues(standard: BoardSet) -> None:
    rng = np.random.default_rng(4)
    for seed, row in enumerate(rng.choice(len(standard), size=25, replace=False)):
        dealt = WEIGHTED.deal(streams(seed), standard, int(row), 1)
        pairs = list(dealt.pairs.values())
        assert list(dealt.pairs) == list("ABCDEF")
        assert all(pair_allowed(pairs[:i], pair) for i, pair in enumerate(pairs))
        kinds = Counter(t for pair in pairs for t in set(pair))
        assert max(kinds.values()) <= 3
        letters = letters_of(standard, int(row))
        for letter, statement in dealt.statements.items():
            assert statement["subject"] == dealt.pairs[letter][0]
            assert holds(statement, letters)
        [x1] = dealt.conferences
        assert x1["subject"] == "planet_x" and holds(x1, letters)
        # no truly empty sector could hold Planet X with every clue of the game still true
        said = [parse(STANDARD, s) for s in [*dealt.statements.values(), x1]]
        for _, _, moved in _impostors(STANDARD, standard.grid[row : row + 1]):
            assert not any(all(c.holds(STANDARD, board) for c in said) for board in moved)


def test_pair_rules_follow_the_generator() -> None:
    assert not pair_allowed([("comet", "empty")], ("comet", "comet"))  # one label: "comet"
    assert not pair_allowed([("comet", "asteroid")], ("asteroid", "comet"))  # its reverse
    assert not pair_allowed([("comet", "asteroid"), ("comet", "gas_cloud")], ("comet", "empty"))
    assert not pair_allowed([("gas_cloud", "empty"), ("asteroid", "empty")], ("comet", "empty"))
    three = [("comet", "asteroid"), ("gas_cloud", "comet"), ("dwarf_planet", "comet")]
    assert pair_allowed(three, ("asteroid", "gas_cloud"))  # no comet in it
    assert pair_allowed(three, ("asteroid", "dwarf_planet"))
    assert pair_allowed(three[:2], ("dwarf_planet", "comet"))
    assert not pair_allowed(three, ("asteroid", "comet"))  # a fourth clue with a comet


def test_statements_are_drawn_as_often_as_their_weights_say(standard: BoardSet) -> None:
    topic = WEIGHTED.topic(standard, ("asteroid", "gas_cloud"))
    row = next(r for r in range(len(standard)) if len(topic.true_statements(r)) >= 4)
    rng = np.random.default_rng(8)
    draws = 20_000
    seen = Counter(str(draw_statement(rng, topic, row)) for _ in range(draws))
    weights = topic.statement_weights()
    true = topic.true_statements(row)
    total = weights[true].sum()
    for k in true:
        expected = weights[k] / total
        assert abs(seen[str(topic.statements[k])] / draws - expected) < 4 * (expected / draws) ** 0.5 + 1e-3


@pytest.mark.slow
def test_the_chance_of_the_first_pair_matches_how_often_it_is_dealt(standard: BoardSet) -> None:
    row = 1234
    one = standard.subset(np.array([row]))
    deals = 3000
    first = Counter(
        next(iter(WEIGHTED.deal(streams(i), standard, row, 0).pairs.values())) for i in range(deals)
    )
    for pair in PAIRS:
        chance = float(WEIGHTED.pairs_likelihood(one, {"A": pair})[0])
        assert abs(first[pair] / deals - chance) < 4 * (chance * (1 - chance) / deals) ** 0.5 + 2e-3, pair


def test_the_chance_of_a_deal_is_zero_where_the_generator_could_not_deal_it(standard: BoardSet) -> None:
    dealt = WEIGHTED.deal(streams(3), standard, 77, 1)
    chance = WEIGHTED.pairs_likelihood(standard, dealt.pairs)
    assert chance[77] > 0 and 0 < (chance > 0).mean() <= 1
    broken = {"A": ("comet", "asteroid"), "B": ("asteroid", "comet")}  # a pair and its reverse
    assert not WEIGHTED.pairs_likelihood(standard, broken).any()
    uniform = MODELS["uniform"].deal(streams(3), standard, 77, 1)
    assert MODELS["uniform"].pairs_likelihood(standard, uniform.pairs)[77] > 0
    heard = WEIGHTED.conference_likelihood(standard, dealt.conferences)
    assert heard is not None and heard[77] > 0


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_chance_of_a_deal_on_some_boards_is_the_whole_sets_on_those_rows(
    standard: BoardSet, name: str
) -> None:
    """What is kept per whole set (the pairs to draw from, the first draw) reads the same on a subset."""
    model = MODELS[name]
    pairs = model.deal(streams(5), standard, 77, 1).pairs
    whole = model.pairs_likelihood(standard, pairs)
    rows = np.arange(0, len(standard), 7)
    np.testing.assert_array_equal(model.pairs_likelihood(standard.subset(rows), pairs), whole[rows])
    if name == "uniform":  # one of the ordered draws of six from the pairs with something true on board 77
        topics = [model.topic(standard, pair) for pair in PAIRS]
        drawn_from = sum(bool(t.informative and t.truth[77]) for t in topics)
        assert whole[77] == pytest.approx(1 / perm(drawn_from, len(pairs)))


def test_the_weighted_generators_guarantee_weighs_boards_by_what_is_still_to_come(standard: BoardSet) -> None:
    """The weighted generator deals conference clues that, with every research clue, rule out each
    impostor (Planet X moved into a truly empty sector). Given some research clues still to come, a board
    weighs the chance that they will; once all are heard, the chance is 1 exactly where every impostor is
    ruled out (checked board by board), and the hidden board always keeps some."""
    rng = np.random.default_rng(8)
    sample = rng.choice(len(standard), size=150, replace=False)
    for seed, row in enumerate(rng.choice(len(standard), size=6, replace=False)):
        dealt = WEIGHTED.deal(streams(seed), standard, int(row), 1)
        research = list(dealt.statements.values())
        pairs = list(dealt.pairs.values())
        for known in range(len(research) + 1):
            chance = WEIGHTED.guarantee_chance(standard, dealt.conferences, research[:known], pairs[known:])
            assert chance[row] > 0 and ((chance >= 0) & (chance <= 1 + 1e-9)).all()
        said = [parse(STANDARD, statement) for statement in [*dealt.conferences, *research]]
        for board in sample:
            impostors = [m[0] for _, _, m in _impostors(STANDARD, standard.grid[board : board + 1]) if len(m)]
            fooled = any(all(clue.holds(STANDARD, moved) for clue in said) for moved in impostors)
            assert chance[board] == (0.0 if fooled else 1.0), board
    assert MODELS["uniform"].guarantee_likelihood(standard, dealt.conferences, [], pairs) is None


@pytest.mark.parametrize("count", [1, 2])
def test_the_share_of_conference_draws_that_tell_planet_x_apart_is_how_often_the_generator_draws_one(
    standard: BoardSet, count: int
) -> None:
    """The weighted generator redraws its conference clues until, with the research clues, they rule out
    every impostor. The share of single draws that would (in closed form, per board) is how often its own
    draw does on the board, counted over 4,000 draws, on boards where the research clues heard change it;
    the guarantee's likelihood divides by it."""
    rng = np.random.default_rng(9)
    checked = 0
    for seed, row in enumerate(rng.choice(len(standard), size=200, replace=False)):
        dealt = WEIGHTED.deal(streams(seed), standard, int(row), count)
        research = list(dealt.statements.values())
        board = standard.subset(np.array([row]))
        alone = WEIGHTED.telling_share(board, [], count)[0]
        known = next(
            (
                known
                for known in range(1, len(research) + 1)
                if 0.05 < WEIGHTED.telling_share(board, research[:known], count)[0] < alone - 0.1
                or 0.05 < alone + 0.1 < WEIGHTED.telling_share(board, research[:known], count)[0] < 0.95
            ),
            None,
        )
        if known is None:
            continue
        heard = research[:known]
        share = WEIGHTED.telling_share(standard, heard, count)
        assert ((share >= 0) & (share <= 1 + 1e-9)).all()
        said = [parse(STANDARD, statement) for statement in heard]
        impostors = [m[0] for _, _, m in _impostors(STANDARD, standard.grid[row : row + 1]) if len(m)]
        standing = [moved for moved in impostors if all(clue.holds(STANDARD, moved) for clue in said)]
        draws = np.random.default_rng([seed, 7])
        tells = 0
        for _ in range(4000):
            drawn = [parse(STANDARD, s) for s in WEIGHTED._draw_conferences(draws, standard, int(row), count)]
            tells += not any(all(clue.holds(STANDARD, moved) for clue in drawn) for moved in standing)
        spread = 4 * (share[row] * (1 - share[row]) / 4000) ** 0.5
        assert abs(tells / 4000 - share[row]) < spread, (row, tells, share[row])
        # with no research still to come (that case: the test below)
        chance = WEIGHTED.guarantee_chance(standard, dealt.conferences, heard, [])
        likelihood = WEIGHTED.guarantee_likelihood(standard, dealt.conferences, heard, [])
        assert likelihood[row] == pytest.approx(chance[row] / share[row])
        checked += 1
        if checked == 2:
            break
    assert checked == 2


def test_the_share_of_telling_draws_adds_up_over_the_first_clue(standard: BoardSet) -> None:
    """Before X2 is read: the chance that the draws still to come complete a telling set, given X1, summed
    over every X1 by the chance the generator draws it first, is the share of whole draws that tell."""
    rng = np.random.default_rng(12)
    rows = rng.choice(len(standard), size=60, replace=False)
    sample = standard.subset(rows)
    dealt = WEIGHTED.deal(streams(5), standard, int(rows[0]), 2)
    heard = list(dealt.statements.values())[:2]
    whole = WEIGHTED.telling_share(sample, heard, 2)
    total = np.zeros(len(sample))
    for first in WEIGHTED.conference_topic(standard).statements:
        chance = WEIGHTED.conference_likelihood(sample, [first], 2)
        if chance is not None:
            total += chance * WEIGHTED.telling_share(sample, heard, 2, [first])
    assert total == pytest.approx(whole) and 0 < whole.min() < 1
    likelihood = WEIGHTED.guarantee_likelihood(sample, dealt.conferences[:1], heard, [], 2)
    completed = WEIGHTED.telling_share(sample, heard, 2, dealt.conferences[:1])
    assert likelihood == pytest.approx(np.where(whole > 0, completed / np.maximum(whole, 1e-300), 1.0))


def test_the_guarantee_counts_the_research_still_to_come(standard: BoardSet) -> None:
    """With research still to come, the guarantee weighs the chance that the conference clues (those read,
    then those still to come, each drawn by its weight) and that research rule out every impostor, over
    the same chance for a draw from the start: summed by brute force over every pair of conference clues
    (the full guarantee's chance once both are read), before X2 and after it."""
    rng = np.random.default_rng(14)
    rows = rng.choice(len(standard), size=60, replace=False)
    sample = standard.subset(rows)
    dealt = WEIGHTED.deal(streams(6), standard, int(rows[0]), 2)
    research = list(dealt.statements.values())
    heard, unheard = research[:1], list(dealt.pairs.values())[1:]
    first, second = dealt.conferences
    statements = WEIGHTED.conference_topic(standard).statements
    share = np.zeros(len(sample))  # the chance a whole draw tells, the research to come counted
    after_first = np.zeros(len(sample))  # the same, given the first clue read
    for one in statements:
        for two in statements:
            both = WEIGHTED.conference_likelihood(sample, [one, two], 2)
            if both is None:
                continue
            tells = both * WEIGHTED.guarantee_chance(sample, [one, two], heard, unheard)
            share += tells
            if one == first:
                after_first += tells
    alone = WEIGHTED.conference_likelihood(sample, [first], 2)
    assert alone is not None
    held = (share > 0) & (alone > 0)  # where X1 is false the conference clues weigh the board 0
    assert held.sum() > 20
    before = WEIGHTED.guarantee_likelihood(sample, [first], heard, unheard, 2)
    assert before[held] == pytest.approx(after_first[held] / alone[held] / share[held])
    full = WEIGHTED.guarantee_likelihood(sample, [first, second], heard, unheard, 2)
    chance = WEIGHTED.guarantee_chance(sample, [first, second], heard, unheard)
    assert full[held] == pytest.approx(chance[held] / share[held])
    without = WEIGHTED.guarantee_likelihood(sample, [first], heard, [], 2)
    assert not np.allclose(before[held], without[held])  # the research to come matters on this sample


def test_a_weighted_topics_draw_normaliser_adds_its_true_statements_weights_in_order(
    standard: BoardSet,
) -> None:
    """Looked up per truth word or summed: the weights of the statements true on each board, added in
    statement order (the same floats), on every board and on words no board has."""
    rng = np.random.default_rng(5)
    for pair in PAIRS:
        topic = WEIGHTED.topic(standard, pair)
        words = topic.truth & rng.integers(0, 1 << 16, size=len(standard)).astype(topic.truth.dtype)
        for truth in (topic.truth, words):
            expected = np.zeros(len(truth))
            for k, weight in enumerate(topic.statement_weights()):
                expected += weight * ((truth.astype(np.uint64) >> np.uint64(k)) & np.uint64(1))
            assert topic.true_weight(truth).tobytes() == expected.tobytes(), pair


def test_the_guarantee_is_the_same_floats_with_its_products_tabulated_or_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A draw's leaf looks up each board's product of rescues in a table found once; where the table
    would be too large it multiplies them out: both give the same floats, bit for bit. Expert boards
    (those starting gas cloud, empty, dwarf planet), where boards keep up to four standing impostors."""
    expert = MODES["expert"]
    boards = BoardSet.from_codes(expert, enumerate_boards(expert, prefix=(2, 0, 3)))
    dealt = WEIGHTED.deal(streams(2), boards, 500, 2)
    research = list(dealt.statements.values())
    heard, unheard = research[:1], list(dealt.pairs.values())[1:]
    shown = [dealt.conferences[:1], dealt.conferences]
    tabulated = [WEIGHTED.guarantee_likelihood(boards, read, heard, unheard, 2) for read in shown]
    monkeypatch.setattr(generators, "PRODUCT_CELLS", 0)
    multiplied = [WEIGHTED.guarantee_likelihood(boards, read, heard, unheard, 2) for read in shown]
    for table, product in zip(tabulated, multiplied, strict=True):
        assert table is not None and product is not None
        assert table.tobytes() == product.tobytes()
        assert len(np.unique(table)) > 100


def test_a_player_weighing_both_models_keeps_the_hidden_board_and_learns_the_dealer(
    standard: BoardSet,
) -> None:
    for model in ("uniform", "weighted"):
        params = {"mode": "standard", "games": 30, "seed": 41, "clue_model": model, "sample_games": 30}
        with Run(600) as run:
            result = simulate.combine(params, [simulate.run_shard(params, "0:30", run).summary])
        assert result["unfinished"] == 0 and result["started_over"] == 0
        assert all(g["found"] for g in result["sample"])
        assert result["model_identified"] >= 24, (model, result["model_identified"])
        assert result["clue_model"] == model and result["clue_model_known"] is False


def test_mixture_weights_keep_each_models_likelihood(standard: BoardSet) -> None:
    boards = standard.subset(np.arange(4))
    mixed = boards.weighted_by_model(np.array([[1.0, 0.0], [0.5, 0.5], [0.0, 0.0], [0.0, 1.0]]))
    assert list(mixed.rows) == [0, 1, 3]  # a board no model allows is gone
    assert np.allclose(mixed.weights, [1, 1, 1])  # each model's chance 1/2 of the same total
    odds = mixed.model_odds()
    assert odds is not None and np.allclose(odds, [0.5, 0.5])
    again = mixed.weighted(np.array([1.0, 1.0, 0.0]))  # a plain fact keeps both models' weights
    assert list(again.rows) == [0, 1] and np.allclose(again.model_odds(), [0.75, 0.25])


@pytest.mark.parametrize("difficulty", ["youth", "beginner", "experienced", "genius"])
def test_starting_facts_are_true_on_distinct_sectors(standard: BoardSet, difficulty: str) -> None:
    rng = np.random.default_rng(2)
    count = starting.DIFFICULTIES[difficulty]
    for row in rng.choice(len(standard), size=30, replace=False):
        facts = starting.draw(rng, standard, int(row), count)
        assert len(facts) == count == len({f["sector"] for f in facts})
        for f in facts:
            assert f["object"] in starting.FACT_OBJECTS
            assert parse(STANDARD, f).holds(STANDARD, standard.grid[row])
            assert f["object"] != "comet" or f["sector"] in STANDARD.primes  # never what the rules tell
        assert starting.likelihood(standard.subset(np.array([row])), facts)[0] > 0


def test_a_starting_fact_is_evidence_as_well_as_a_fact(standard: BoardSet) -> None:
    fact = starting.fact(2, "asteroid")  # sector 2 is prime: comets may be there, four objects possible
    chance = starting.likelihood(standard, [fact])
    column = standard.grid[:, 1]
    holding = np.isin(column, [OBJECTS[name] for name in starting.FACT_OBJECTS])
    assert not chance[column == ASTEROID].any()  # an asteroid there: false
    rest = column != ASTEROID
    assert np.allclose(chance[rest & holding], 1 / 3) and np.allclose(chance[rest & ~holding], 1 / 4)


def test_starting_facts_shorten_games() -> None:
    def average(difficulty: str) -> float:
        params = {
            "mode": "standard",
            "games": 60,
            "seed": 9,
            "difficulty": difficulty,
            "clue_model_known": True,
        }
        with Run(600) as run:
            result = simulate.combine(params, [simulate.run_shard(params, "0:60", run).summary])
        assert result["difficulty"] == difficulty and result["unfinished"] == 0
        return result["avg_days"]

    assert average("youth") < average("genius") - 2


def test_the_schemas_name_what_the_solver_knows() -> None:
    assert schema.DIFFICULTIES == starting.DIFFICULTIES
    assert schema.STARTING_FACT_OBJECTS == starting.FACT_OBJECTS
    assert tuple(generators.MODELS) == schema.CLUE_MODELS
