"""Research and conference clues: the model draws only true statements (checked by a plain-Python evaluator
written here, apart from the numpy masks), research is ranked as an action whose outcome distribution adds
up to the boards left, and simulated games with research obey the game's rules."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from puzzles.planetx import clues, deduce, generators, simulate
from puzzles.planetx.actions import survey_days, visible_sectors
from puzzles.planetx.board import LETTERS, MODES
from puzzles.planetx.boardset import BoardSet
from puzzles.planetx.observations import arc, parse
from puzzles.planetx.rules import enumerate_boards, is_valid
from puzzles.runtime import Run

STANDARD = MODES["standard"]
NAMES = {"empty": "E", "planet_x": "X", "gas_cloud": "G", "dwarf_planet": "D", "asteroid": "A", "comet": "C"}


def holds(statement: dict, letters: str) -> bool:
    """A clue on a board given as letters, from the rules' wording alone."""
    n = len(letters)
    subject = NAMES[statement["subject"]]
    where = [i for i, letter in enumerate(letters) if letter == subject]
    if statement["relation"] == "band":
        width = statement["width"]
        fits = lambda w: any(all((i - start) % n < w for i in where) for start in range(n))  # noqa: E731
        return fits(width) and not (statement["exact"] and fits(width - 1))
    other = NAMES[statement["object"]]
    if statement["relation"] == "opposite":
        reach = {n // 2}
    else:
        steps = 1 if statement["relation"] == "adjacent" else statement["distance"]
        reach = {d % n for d in range(-steps, steps + 1)} - {0}
    near = [any(letters[(i + d) % n] == other for d in reach) for i in where]
    quantifier = statement["quantifier"]
    return all(near) if quantifier == "all" else any(near) if quantifier == "some" else not any(near)


@pytest.fixture(scope="module")
def standard() -> BoardSet:
    return BoardSet.from_codes(STANDARD, enumerate_boards(STANDARD))


def letters_of(boards: BoardSet, row: int) -> str:
    return "".join(LETTERS[obj] for obj in boards.grid[row])


def test_every_topics_truth_table_agrees_with_the_rules_wording(standard: BoardSet) -> None:
    rows = np.random.default_rng(1).choice(len(standard), size=60, replace=False)
    pairs = [(s, o) for s in clues.RESEARCH_SUBJECTS for o in clues.RESEARCH_OTHERS]
    topics = [clues.research_topic(standard, s, o) for s, o in pairs] + [clues.conference_topic(standard)]
    for topic in topics:
        for row in rows:
            expected = [k for k, st in enumerate(topic.statements) if holds(st, letters_of(standard, row))]
            assert topic.true_statements(int(row)) == expected, (topic.label(), letters_of(standard, row))


def test_every_clue_holds_where_its_mask_says_on_expert_boards() -> None:
    """Eighteen sectors, bands and the opposite sector nine away: every statement either clue model can
    make, found over a whole set at once (`statement_masks`) and one by one on a raw grid (`mask`),
    against the rules' wording on a sample of expert boards and on random rows of objects (any sector,
    the wrap from 18 to 1 included)."""
    expert = MODES["expert"]
    boards = BoardSet.from_codes(expert, enumerate_boards(expert, prefix=(2, 0, 3)))
    statements = [st for s, o in generators.PAIRS for st in clues.pair_statements(expert, s, o)]
    statements += clues.conference_statements(expert)
    statements += [st for pair in generators.PAIRS for st, _ in generators.weighted_statements(expert, *pair)]
    rng = np.random.default_rng(3)
    rows = rng.choice(len(boards), size=40, replace=False)
    shared = clues.statement_masks(boards, statements)
    scrambled = rng.integers(0, 6, size=(200, expert.sectors)).astype(boards.grid.dtype)
    letters = ["".join(LETTERS[obj] for obj in row) for row in scrambled]
    for statement, mask in zip(statements, shared, strict=True):
        observation = parse(expert, statement)
        assert np.array_equal(mask, observation.mask(expert, boards.grid)), statement
        expected = [holds(statement, letters_of(boards, row)) for row in rows]
        assert mask[rows].tolist() == expected, statement
        on_scrambled = observation.mask(expert, scrambled).tolist()
        assert on_scrambled == [holds(statement, row) for row in letters], statement
    assert any(0 < mask.sum() < len(boards) for mask in shared)


def test_statements_that_tell_nothing_are_never_drawn(standard: BoardSet) -> None:
    gas_empty = clues.research_topic(standard, "gas_cloud", "empty")
    every = [letters_of(standard, row) for row in range(len(standard))]
    for statement in gas_empty.statements:  # "every gas cloud is next to empty space" is a placement rule
        assert 0 < sum(holds(statement, board) for board in every) < len(every), statement
    lone_dwarf = clues.research_topic(standard, "dwarf_planet", "dwarf_planet")  # one dwarf in standard
    assert not lone_dwarf.informative
    rng = np.random.default_rng(4)
    assert all(t.informative for _ in range(20) for t in clues.draw_topics(rng, standard, 5).values())


def test_drawn_clues_are_true_on_their_board_and_conferences_single_out_planet_x(standard: BoardSet) -> None:
    rng = np.random.default_rng(7)
    singled = 0
    for row in rng.choice(len(standard), size=150, replace=False):
        board = letters_of(standard, int(row))
        topics = clues.draw_topics(rng, standard, int(row))
        assert list(topics) == list("ABCDEF")
        assert len({(t.subject, t.other) for t in topics.values()}) == 6
        for topic in topics.values():
            statement = clues.draw_statement(rng, topic, int(row))
            assert holds(statement, board) and statement["subject"] == topic.subject
        heard = clues.draw_conferences(rng, standard, int(row), 1)
        assert len(heard) == 1 and holds(heard[0], board) and heard[0]["subject"] == "planet_x"
        true = [st for st in clues.conference_statements(STANDARD) if holds(st, board)]
        if any(singles_out(board, [statement]) for statement in true):
            assert singles_out(board, heard)
            singled += 1
    assert singled > 100


def singles_out(board: str, statements: list[dict]) -> bool:
    """Does every valid board with Planet X moved into an empty sector break one of the statements?"""
    x = board.index("X")
    for sector, letter in enumerate(board):
        if letter == "E":
            moved = list(board)
            moved[x], moved[sector] = "E", "X"
            valid = is_valid(STANDARD, [LETTERS.index(c) for c in moved])
            if valid and all(holds(st, "".join(moved)) for st in statements):
                return False
    return True


def could_show(board: str, shown: list[dict]) -> bool:
    """Could the game have read these conference clues on this board? (They single Planet X out, or no
    as many true statements would.)"""
    true = [st for st in clues.conference_statements(STANDARD) if holds(st, board)]
    sets = itertools.combinations(true, min(len(shown), len(true)))
    return singles_out(board, shown) or not any(singles_out(board, list(chosen)) for chosen in sets)


def test_the_conference_guarantee_keeps_the_boards_the_game_could_read_them_on(standard: BoardSet) -> None:
    rng = np.random.default_rng(11)
    rows = rng.choice(len(standard), size=50, replace=False)
    sample, boards = standard.subset(rows), [letters_of(standard, int(row)) for row in rows]
    ruled_out = 0
    for count in (1, 2):
        for hidden in rng.choice(len(standard), size=3, replace=False):
            shown = clues.draw_conferences(rng, standard, int(hidden), count)
            kept = clues.told_apart(sample, shown)
            assert kept.tolist() == [could_show(board, shown) for board in boards], shown
            ruled_out += int((~kept).sum())
            assert clues.told_apart(standard.subset(np.array([hidden])), shown).tolist() == [True]
    assert ruled_out > 0, "the guarantee tells something"


def test_the_guarantee_is_the_same_on_a_set_that_is_not_cut_from_every_board(standard: BoardSet) -> None:
    """Impostors are looked up in the whole set when it has them, else the statements are evaluated."""
    rng = np.random.default_rng(14)
    rows = np.sort(rng.choice(len(standard), size=400, replace=False))
    partial = BoardSet.from_codes(STANDARD, standard.codes[rows])  # its own whole: most impostors missing
    ruled_out = 0
    for hidden in rows[:5]:
        shown = clues.draw_conferences(rng, standard, int(hidden), 1)
        cut = clues.told_apart(standard.subset(rows), shown)
        assert clues.told_apart(partial, shown).tolist() == cut.tolist()
        ruled_out += int((~cut).sum())
    assert ruled_out > 0


def test_a_hidden_board_always_survives_its_own_conferences(standard: BoardSet) -> None:
    rng = np.random.default_rng(12)
    rows = rng.choice(len(standard), size=300, replace=False)
    for row in rows:
        shown = clues.draw_conferences(rng, standard, int(row), 1)
        assert clues.told_apart(standard.subset(np.array([row])), shown).tolist() == [True], row


def test_deduce_applies_the_guarantee_once_every_conference_is_recorded(standard: BoardSet) -> None:
    rng = np.random.default_rng(13)
    hidden = int(rng.integers(len(standard)))
    [heard] = clues.draw_conferences(rng, standard, hidden, 1)
    with Run(60) as run:
        plain = deduce.solve({"mode": "standard", "observations": [heard]}, run)
        told = deduce.solve({"mode": "standard", "observations": [{**heard, "topic": "X1"}]}, run)
    agree = standard.subset(parse(STANDARD, heard).mask(STANDARD, standard.grid))
    assert plain["boards"] == len(agree)
    assert told["boards"] == int(clues.told_apart(agree, [heard]).sum()) < plain["boards"]
    assert told["status"] == "ok"


def test_a_research_clue_weighs_each_board_by_one_over_its_true_statements(standard: BoardSet) -> None:
    rng = np.random.default_rng(21)
    rows = rng.choice(len(standard), size=80, replace=False)
    sample, boards = standard.subset(rows), [letters_of(standard, int(row)) for row in rows]
    for pair in (("comet", "asteroid"), ("asteroid", "asteroid"), ("gas_cloud", "empty")):
        topic = clues.research_topic(standard, *pair)
        shown = clues.draw_statement(rng, topic, int(rows[0]))
        expected = []
        for board in boards:
            true = [st for st in topic.statements if holds(st, board)]
            expected.append(1 / len(true) if holds(shown, board) else 0.0)
        assert clues.research_likelihood(sample, topic, shown).tolist() == pytest.approx(expected)
        assert clues.research_likelihood(sample, topic, {**shown, "topic": "B"}).tolist() == pytest.approx(
            expected
        ), "a recorded clue carries its topic letter"
    never = {"type": "clue", "relation": "band", "subject": "comet", "width": 12, "exact": False}
    assert clues.research_likelihood(sample, clues.research_topic(standard, "comet", "comet"), never) is None


def test_conference_clues_weigh_each_board_by_the_chance_the_game_picks_them(standard: BoardSet) -> None:
    rng = np.random.default_rng(22)
    statements = clues.conference_topic(standard).statements
    for count, size in ((1, 40), (2, 12)):
        rows = rng.choice(len(standard), size=size, replace=False)
        sample = standard.subset(rows)
        hidden = int(rows[0])
        shown = clues.draw_conferences(rng, standard, hidden, count)
        chance = clues.conference_likelihood(sample, shown)
        assert chance[0] > 0
        for row, got in zip(rows, chance, strict=True):
            board = letters_of(standard, int(row))
            true = [st for st in statements if holds(st, board)]
            sets = [list(chosen) for chosen in itertools.combinations(true, count)]
            telling = [chosen for chosen in sets if singles_out(board, chosen)]
            pool = telling or sets
            picked = any(sorted(map(repr, chosen)) == sorted(map(repr, shown)) for chosen in pool)
            assert got == pytest.approx(1 / len(pool) if picked else 0.0), (board, shown)
        true = np.logical_and.reduce([parse(STANDARD, st).mask(STANDARD, sample.grid) for st in shown])
        assert (chance > 0).tolist() == (true & clues.told_apart(sample, shown)).tolist()
        assert true.sum() > 0 and (chance > 0).sum() < len(rows)


def test_a_first_conference_clue_weighs_each_board_by_the_sets_the_game_could_read_it_in(
    standard: BoardSet,
) -> None:
    """Before X2 is read, X1 is evidence too: on each board, the share of the sets the game picks from
    (those that tell Planet X apart, else all) that hold it; the uniform model reads the set in a random
    order, so X1 is the first with half that chance, and over every X2 that follows it adds up to it."""
    rng = np.random.default_rng(23)
    statements = clues.conference_topic(standard).statements
    rows = rng.choice(len(standard), size=12, replace=False)
    sample = standard.subset(rows)
    first, second = clues.draw_conferences(rng, standard, int(rows[0]), 2)
    chance = clues.conference_likelihood(sample, [first], 2)
    assert chance is not None and chance[0] > 0
    for row, got in zip(rows, chance, strict=True):
        board = letters_of(standard, int(row))
        true = [st for st in statements if holds(st, board)]
        sets = [list(chosen) for chosen in itertools.combinations(true, 2)]
        pool = [chosen for chosen in sets if singles_out(board, chosen)] or sets
        holding = [chosen for chosen in pool if repr(first) in map(repr, chosen)]
        assert got == pytest.approx(len(holding) / len(pool)), board
    uniform = generators.MODELS["uniform"]
    ordered = uniform.conference_likelihood(sample, [first], 2)
    assert ordered == pytest.approx(chance / 2)
    then = [uniform.conference_likelihood(sample, [first, st], 2) for st in statements if st != first]
    assert sum(c for c in then if c is not None) == pytest.approx(ordered)
    assert uniform.conference_likelihood(sample, [first, second], 2)[0] > 0
    nothing = standard.subset(np.array([], dtype=np.int64))  # a player whose boards are all ruled out
    assert len(clues.conference_likelihood(nothing, [first], 2)) == 0


def test_weights_average_one_and_follow_the_boards_they_belong_to(standard: BoardSet) -> None:
    sample = standard.subset(np.arange(10))
    weighted = sample.weighted(np.array([0, 1, 2, 0, 1, 1, 1, 1, 1, 2], dtype=float))
    assert len(weighted) == 8 and weighted.weights.sum() == pytest.approx(8)
    assert weighted.weights.tolist() == pytest.approx([0.8, 1.6, 0.8, 0.8, 0.8, 0.8, 0.8, 1.6])
    assert weighted.rows.tolist() == [1, 2, 4, 5, 6, 7, 8, 9]
    again = weighted.subset(np.array([1, 7]))
    assert again.weights.tolist() == pytest.approx([1.6, 1.6]) and again.whole is standard
    triples, counts = weighted.triple_counts()
    by_triple = Counter()
    for triple, weight in zip(weighted.planet_x_triples(), weighted.weights, strict=True):
        by_triple[int(triple)] += weight
    assert dict(zip(triples.tolist(), counts.tolist(), strict=True)) == pytest.approx(dict(by_triple))
    assert counts.tolist() == sorted(counts.tolist(), reverse=True)


def test_deduce_weighs_recorded_research_clues_unless_told_not_to(standard: BoardSet) -> None:
    topic = clues.research_topic(standard, "comet", "asteroid")
    rng = np.random.default_rng(23)
    shown = {**clues.draw_statement(rng, topic, int(rng.integers(len(standard)))), "topic": "A"}
    topics = {"A": ["comet", "asteroid"], "B": ["asteroid", "empty"]}
    base = {"mode": "standard", "observations": [shown], "topics": topics, "top": 500}
    with Run(60) as run:
        weighed = deduce.solve(base, run)
        plain = deduce.solve({**base, "weigh_clues": False}, run)
    left = [letters_of(standard, row) for row in range(len(standard))]
    left = [board for board in left if holds(shown, board)]
    assert weighed["boards"] == plain["boards"] == len(left)
    chance = {board: 1 / sum(holds(st, board) for st in topic.statements) for board in left}
    for result, weight in ((weighed, chance), (plain, dict.fromkeys(left, 1.0))):
        total = sum(weight.values())
        for candidate in result["planet_x"]:
            share = sum(w for board, w in weight.items() if board.index("X") + 1 == candidate["sector"])
            assert candidate["probability"] == pytest.approx(share / total)
        for row in result["sectors"]:
            comets = sum(w for board, w in weight.items() if board[row["sector"] - 1] == "C")
            assert row["probabilities"]["comet"] == pytest.approx(comets / total)
    assert weighed["planet_x"] != plain["planet_x"]
    [research] = [r for r in weighed["actions"] if r["action"] == {"type": "research", "topic": "B"}]
    assert sum(o["boards"] for o in research["outcomes"]) == pytest.approx(len(left))


def test_a_research_actions_outcomes_add_up_to_the_boards_left(standard: BoardSet) -> None:
    observations = [{"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2}]
    params = {
        "mode": "standard",
        "observations": observations,
        "topics": {"A": ["comet", "asteroid"], "B": ["gas_cloud", "gas_cloud"], "C": ["asteroid", "empty"]},
        "researched": ["C"],
        "top": 500,
    }
    with Run(60) as run:
        result = deduce.solve(params, run)
    left = [
        letters_of(standard, row)
        for row in range(len(standard))
        if sum(letters_of(standard, row)[s] == "A" for s in range(6)) == 2
    ]
    assert result["boards"] == len(left)
    research = {r["action"]["topic"]: r for r in result["actions"] if r["action"]["type"] == "research"}
    assert set(research) == {"A", "B"} and research["A"]["days"] == 1
    for letter, pair in (("A", ("comet", "asteroid")), ("B", ("gas_cloud", "gas_cloud"))):
        ranked = research[letter]
        assert ranked["label"].startswith(f"research {letter}")
        assert sum(o["boards"] for o in ranked["outcomes"]) == pytest.approx(len(left))
        assert sum(o["probability"] for o in ranked["outcomes"]) == pytest.approx(1)
        statements = clues.research_topic(standard, *pair).statements
        true_on = {board: [st for st in statements if holds(st, board)] for board in left}
        share: Counter = Counter()
        joint: Counter = Counter()
        for board, true in true_on.items():
            triple = (board.index("X"), board[board.index("X") - 1], board[(board.index("X") + 1) % 12])
            for statement in true:
                key = repr(sorted(statement.items()))
                share[key] += 1 / len(true)
                joint[key, triple] += 1 / len(true)
        by_statement = {repr(sorted(o["outcome"].items())): o for o in ranked["outcomes"]}
        assert {k: pytest.approx(v) for k, v in share.items()} == {
            k: o["boards"] for k, o in by_statement.items()
        }
        for key, outcome in by_statement.items():
            statement = dict(eval(key))  # noqa: S307 (our own repr of a dict of plain values)
            assert outcome["boards_left"] == sum(holds(statement, board) for board in left)
        draw = sum(math.log2(len(true)) for true in true_on.values()) / len(left)
        assert ranked["bits"] == pytest.approx(entropy(share.values()) - draw, abs=1e-9)
        triples = Counter((b.index("X"), b[b.index("X") - 1], b[(b.index("X") + 1) % 12]) for b in left)
        mutual = entropy(share.values()) + entropy(triples.values()) - entropy(joint.values())
        assert ranked["goal_bits"] == pytest.approx(mutual, abs=1e-9)


def entropy(weights) -> float:
    weights = list(weights)
    total = sum(weights)
    return -sum(w / total * math.log2(w / total) for w in weights if w > 0)


def test_research_is_not_offered_twice_in_a_row_nor_again() -> None:
    topics = {"A": ["comet", "asteroid"], "B": ["asteroid", "empty"]}
    recorded = {"type": "clue", "relation": "opposite", "quantifier": "none", "subject": "comet"}
    recorded |= {"object": "asteroid", "topic": "A"}

    def offered(**extra) -> set[str]:
        with Run(60) as run:
            result = deduce.solve({"mode": "standard", "topics": topics, "top": 500, **extra}, run)
        return {r["action"]["topic"] for r in result["actions"] if r["action"]["type"] == "research"}

    assert offered() == {"A", "B"}
    assert offered(last_action_research=True) == set()
    assert offered(researched=["B"]) == {"A"}
    assert offered(observations=[recorded]) == {"B"}


def test_impossible_clues_are_a_contradiction_not_an_error() -> None:
    observations = [
        {
            "type": "clue",
            "relation": "adjacent",
            "quantifier": "all",
            "subject": "planet_x",
            "object": "comet",
        },
        {
            "type": "clue",
            "relation": "adjacent",
            "quantifier": "none",
            "subject": "planet_x",
            "object": "comet",
        },
    ]
    with Run(60) as run:
        result = deduce.solve(
            {"mode": "standard", "observations": observations, "topics": {"A": ["comet"] * 2}}, run
        )
    assert result["status"] == "contradiction" and result["boards"] == 0 and "actions" not in result


def cost(move: dict) -> int:
    if move["type"] == "survey":
        return survey_days(len(arc(STANDARD, move["first"], move["last"])))
    return {"research": 1, "target": 4, "locate": 5}[move["type"]]


def test_simulated_games_with_research_obey_the_rules() -> None:
    params = {"mode": "standard", "games": 40, "seed": 12, "policy": "research", "sample_games": 40}
    with Run(300) as run:
        summaries = [simulate.run_shard(params, key, run).summary for key in simulate.plan(params, run)]
    result = simulate.combine(params, summaries)
    assert result["games"] == 40 and result["unfinished"] == 0 and result["conference_spaces"] == [10]
    assert result["weigh_clues"] is True
    researched_games = 0
    for game in result["sample"]:
        moves = game["moves"]
        kinds = [m["type"] for m in moves]
        assert all(not (a == b == "research") for a, b in itertools.pairwise(kinds))
        topics = [m["topic"] for m in moves if m["type"] == "research"]
        assert len(topics) == len(set(topics)) <= 6 and set(topics) <= set("ABCDEF")
        researched_games += bool(topics)
        assert kinds.count("target") <= 2 and kinds[-1] == "locate"
        for move in moves:
            sky = set(visible_sectors(STANDARD, (move["day"] % 12) + 1))
            if move["type"] == "target":
                assert move["sector"] in sky
            if move["type"] == "survey":
                assert {move["first"], move["last"]} <= sky
        for move, after in itertools.pairwise(moves):
            assert after["day"] - move["day"] == cost(move)
        assert game["days"] == moves[-1]["day"] + cost(moves[-1])
        assert game["conferences"] == int(moves[-1]["day"] >= 9)  # read on reaching space 10 (day 9)
    assert researched_games == 40


@pytest.mark.slow
def test_research_saves_days_over_the_goal_policy() -> None:
    def average(policy: str, conferences: bool, weigh: bool = True) -> float:
        params = {"mode": "standard", "games": 150, "seed": 31, "policy": policy, "conferences": conferences}
        params["weigh_clues"] = weigh
        with Run(600) as run:
            summaries = [simulate.run_shard(params, key, run).summary for key in simulate.plan(params, run)]
        return simulate.combine(params, summaries)["avg_days"]

    without = average("goal", conferences=False)
    assert average("research", conferences=True) < average("goal", conferences=True) < without
    assert average("research", conferences=True) < average("research", conferences=True, weigh=False)
