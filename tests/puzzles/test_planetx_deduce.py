"""Planet X deduction: observations read three ways (numpy, plain Python, Z3) must agree, and every
probability and action score must equal a brute-force count over the boards."""

import itertools
import math
import random
from collections import Counter

import numpy as np
import pytest

from puzzles.planetx import clues, deduce
from puzzles.planetx.actions import LOCATE_DAYS, legal_actions, outcome_name, survey_days
from puzzles.planetx.board import MODES, OBJECT_NAMES, PLANET_X, decode, encode
from puzzles.planetx.boardset import BoardSet
from puzzles.planetx.observations import arc, parse, parse_all
from puzzles.planetx.rules import enumerate_boards
from puzzles.runtime import Run

STANDARD = MODES["standard"]
EXPERT = MODES["expert"]
SHOWN = {0: "empty", 1: "empty", 2: "gas_cloud", 3: "dwarf_planet", 4: "asteroid", 5: "comet"}


@pytest.fixture(scope="module")
def standard_boards() -> list[list[int]]:
    return [decode(code, 12) for code in enumerate_boards(STANDARD)]


def random_observation(rng: random.Random, board: list[int], truthful: bool = True) -> dict:
    """An observation of `board` (or, untruthful, one that may not hold for it)."""
    n = len(board)
    kind = rng.choice(["sector", "survey", "target", "adjacent", "opposite", "within", "band", "locate"])
    obj = rng.choice(OBJECT_NAMES)
    other = rng.choice(OBJECT_NAMES)
    sector = rng.randint(1, n)
    if kind == "sector":
        return {"type": "sector", "sector": sector, "object": obj, "present": board[sector - 1] == obj}
    if kind == "survey":
        surveyed = rng.choice(["asteroid", "comet", "dwarf_planet", "gas_cloud", "empty"])
        first, width = sector, rng.randint(1, 6)
        last = (first + width - 2) % n + 1
        count = sum(SHOWN[board[s - 1]] == surveyed for s in arc(MODES["standard"], first, last))
        return {
            "type": "survey",
            "object": surveyed,
            "first": first,
            "last": last,
            "count": count if truthful else rng.randint(0, width),
        }
    if kind == "target":
        seen = SHOWN[board[sector - 1]] if truthful else rng.choice(list(set(SHOWN.values())))
        return {"type": "target", "sector": sector, "seen": seen}
    if kind == "locate":
        return {"type": "locate", "sector": sector, "left": obj, "right": other}
    clue = {"type": "clue", "relation": kind, "subject": obj}
    if kind == "band":
        return {**clue, "width": rng.randint(1, 8), "exact": rng.random() < 0.5}
    quantifiers = {
        "adjacent": ["all", "some", "none"],
        "opposite": ["some", "none"],
        "within": ["all", "none"],
    }
    clue.update(object=other, quantifier=rng.choice(quantifiers[kind]))
    if kind == "within":
        clue["distance"] = rng.randint(1, 4)
    return clue


def brute_force(boards: list[list[int]], observations: list[dict]) -> list[list[int]]:
    parsed = parse_all(STANDARD, observations)
    return [b for b in boards if all(o.holds(STANDARD, b) for o in parsed)]


@pytest.mark.slow
def test_observations_filter_the_same_boards_in_numpy_python_and_z3(standard_boards) -> None:
    rng = random.Random(11)
    everything = BoardSet.from_codes(STANDARD, [encode(b) for b in standard_boards])
    checked_with_z3 = 0
    for trial in range(60):
        truth = rng.choice(standard_boards)
        observations = [
            random_observation(rng, truth, truthful=trial % 3 != 0) for _ in range(rng.randint(1, 4))
        ]
        expected = brute_force(standard_boards, observations)
        kept = deduce.remaining_boards(everything, parse_all(STANDARD, observations))
        assert sorted(kept.codes.tolist()) == sorted(encode(b) for b in expected), observations
        if trial % 4 == 0:
            with Run(60) as run:
                assert deduce.z3_count(STANDARD, parse_all(STANDARD, observations), run) == len(expected)
            checked_with_z3 += 1
    assert checked_with_z3 == 15


def test_clue_semantics_on_a_hand_made_board() -> None:
    board = [4, 4, 5, 0, 2, 1, 0, 3, 4, 4, 5, 2]  # A A C E G X E D A A C G on 12 sectors
    holds = lambda obs: parse_all(STANDARD, [obs])[0].holds(STANDARD, board)  # noqa: E731
    clue = {"type": "clue", "subject": "planet_x"}
    assert holds({**clue, "relation": "adjacent", "quantifier": "all", "object": "empty"})
    assert not holds({**clue, "relation": "adjacent", "quantifier": "some", "object": "dwarf_planet"})
    assert holds({**clue, "relation": "opposite", "quantifier": "some", "object": "gas_cloud"})  # 6 faces 12
    assert not holds({**clue, "relation": "opposite", "quantifier": "some", "object": "comet"})
    assert holds({**clue, "relation": "within", "quantifier": "all", "distance": 3, "object": "asteroid"})
    assert not holds({**clue, "relation": "within", "quantifier": "all", "distance": 2, "object": "asteroid"})
    assert (
        holds({"type": "clue", "relation": "band", "subject": "comet", "width": 4, "exact": False}) is False
    )
    assert holds(
        {"type": "clue", "relation": "band", "subject": "gas_cloud", "width": 6, "exact": True}
    )  # 12-5
    assert not holds({"type": "clue", "relation": "band", "subject": "gas_cloud", "width": 7, "exact": True})
    assert holds({"type": "clue", "relation": "band", "subject": "gas_cloud", "width": 7, "exact": False})
    assert holds({"type": "survey", "object": "empty", "first": 11, "last": 7, "count": 3})  # wraps; X counts
    assert holds({"type": "target", "sector": 6, "seen": "empty"})


def test_probabilities_and_candidates_are_exact_counts(standard_boards) -> None:
    observations = [
        {"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2},
        {
            "type": "clue",
            "relation": "adjacent",
            "quantifier": "none",
            "subject": "gas_cloud",
            "object": "comet",
        },
    ]
    with Run(60) as run:
        result = deduce.solve({"mode": "standard", "observations": observations, "verify_with_z3": True}, run)
    expected = brute_force(standard_boards, observations)
    assert result["status"] == "ok" and result["boards"] == result["z3_count"] == len(expected) > 0
    for row in result["sectors"]:
        counts = Counter(b[row["sector"] - 1] for b in expected)
        for obj, name in enumerate(OBJECT_NAMES):
            assert row["probabilities"][name] == pytest.approx(counts[obj] / len(expected))
    x = Counter(b.index(PLANET_X) + 1 for b in expected)
    assert {c["sector"]: c["probability"] for c in result["planet_x"]} == pytest.approx(
        {s: n / len(expected) for s, n in x.items()}
    )
    triples = Counter(
        (b.index(PLANET_X), b[b.index(PLANET_X) - 1], b[(b.index(PLANET_X) + 1) % 12]) for b in expected
    )
    best = max(triples.values())
    assert result["locate"]["probability"] == pytest.approx(best / len(expected))
    assert result["locate"]["candidates"] == len(triples)


def entropy(counts) -> float:
    total = sum(counts)
    return -sum(c / total * math.log2(c / total) for c in counts if c)


def test_action_outcomes_and_information_match_brute_force(standard_boards) -> None:
    observations = [{"type": "target", "sector": 2, "seen": "asteroid"}]
    remaining = brute_force(standard_boards, observations)
    with Run(60) as run:
        result = deduce.solve(
            {"mode": "standard", "observations": observations, "sky_start": 10, "top": 500}, run
        )
    assert len(result["actions"]) == len(legal_actions(STANDARD, 10))
    for ranked in result["actions"]:
        action = ranked["action"]
        if action["type"] == "target":
            shown = [SHOWN[b[action["sector"] - 1]] for b in remaining]
        else:
            sectors = arc(STANDARD, action["first"], action["last"])
            shown = [sum(SHOWN[b[s - 1]] == action["object"] for s in sectors) for b in remaining]
        counts = Counter(shown)
        assert {o["outcome"]: o["boards"] for o in ranked["outcomes"]} == dict(counts)
        assert ranked["bits"] == pytest.approx(entropy(counts.values()))
        triple = [
            (b.index(PLANET_X), b[b.index(PLANET_X) - 1], b[(b.index(PLANET_X) + 1) % 12]) for b in remaining
        ]
        joint = Counter(zip(shown, triple, strict=True))
        mutual = entropy(counts.values()) + entropy(Counter(triple).values()) - entropy(joint.values())
        assert ranked["goal_bits"] == pytest.approx(mutual, abs=1e-9)
    per_day = [a["bits_per_day"] for a in result["actions"]]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(per_day))  # best first


def test_a_subsets_planet_x_triples_are_its_rows_of_the_whole_sets(standard_boards) -> None:
    whole = BoardSet.from_codes(STANDARD, [encode(b) for b in standard_boards])
    rng = np.random.default_rng(5)
    half = whole.subset(rng.random(len(whole)) < 0.5)
    part = half.subset(np.arange(0, len(half), 3))
    alone = BoardSet.from_codes(STANDARD, part.codes)  # the same boards, found afresh
    assert np.array_equal(part.planet_x_triples(), alone.planet_x_triples())
    expected = [
        b.index(PLANET_X) * 36 + b[b.index(PLANET_X) - 1] * 6 + b[(b.index(PLANET_X) + 1) % 12]
        for b in (decode(int(code), 12) for code in part.codes[:50])
    ]
    assert part.planet_x_triples()[:50].tolist() == expected
    assert not whole.planet_x_triples().flags.writeable  # shared by every subset: nobody writes it


def test_legal_actions_follow_the_sky_and_the_survey_rules() -> None:
    actions = legal_actions(STANDARD, sky_start=10, targets_left=1)
    visible = {10, 11, 12, 1, 2, 3}
    assert all(set(a.sectors) <= visible for a in actions)
    assert {a.sectors[0] for a in actions if a.type == "target"} == visible
    comets = [a for a in actions if a.object == "comet"]
    assert comets and all(
        a.sectors[0] in STANDARD.primes and a.sectors[-1] in STANDARD.primes for a in comets
    )
    assert all(a.days == survey_days(len(a.sectors)) for a in actions if a.type == "survey")
    assert max(len(a.sectors) for a in actions) == 6
    assert not [a for a in legal_actions(STANDARD, 1, targets_left=0) if a.type == "target"]
    expert = legal_actions(EXPERT, sky_start=1)
    assert max(len(a.sectors) for a in expert) == 9 and min(a.days for a in expert) == 2
    assert outcome_name(actions[-1], 1) == "planet_x" and LOCATE_DAYS == 5


def test_a_contradiction_is_reported_not_raised() -> None:
    observations = [
        {"type": "sector", "sector": 1, "object": "comet"},  # sector 1 is not prime
    ]
    with Run(60) as run:
        result = deduce.solve({"mode": "standard", "observations": observations}, run)
    assert (
        result["status"] == "contradiction" and result["boards"] == 0 and "observation" in result["message"]
    )


def test_the_stored_enumeration_is_used_when_the_host_offers_it() -> None:
    codes = enumerate_boards(STANDARD)
    loads = []

    def stored(mode: str):
        return "job-1", lambda: loads.append(mode) or codes[:1000]

    with Run(60, resources={"planetx.boards": stored}) as run:
        first = deduce.solve({"mode": "standard"}, run)
        second = deduce.solve({"mode": "standard"}, run)
    assert first["source"] == second["source"] == "stored"
    assert first["total_boards"] == 1000 and loads == ["standard"]  # loaded once, then kept
    with Run(60) as run:
        assert deduce.solve({"mode": "standard"}, run)["source"] == "enumerated"


@pytest.mark.slow
def test_expert_deduction_ranks_wide_surveys() -> None:
    codes = np.array(enumerate_boards(EXPERT, prefix=[4, 4]))  # a slice of expert, to stay quick
    with Run(120, resources={"planetx.boards": lambda mode: ("slice", lambda: codes)}) as run:
        result = deduce.solve({"mode": "expert", "top": 3}, run)
    assert result["boards"] == len(codes) and len(result["actions"]) == 3
    assert all(sum(o["boards"] for o in a["outcomes"]) == len(codes) for a in result["actions"])


@pytest.mark.slow
def test_an_expert_first_conference_clue_weighs_the_boards_before_the_second_is_read() -> None:
    """Expert games read two conference clues; X1 alone rules out where it is false and weighs each board
    by the share of the sets the game could read that hold it (`clues.conference_likelihood`): none,
    where some pair tells Planet X apart but none with X1 does."""
    whole = BoardSet.from_codes(EXPERT, enumerate_boards(EXPERT, prefix=[4, 4]))
    statements = clues.conference_topic(whole).statements
    x1 = next(st for st in statements if 0.2 < parse(EXPERT, st).mask(EXPERT, whole.grid).mean() < 0.8)
    observations = parse_all(EXPERT, [x1])
    plain = deduce.remaining_boards(whole, observations, [x1], weigh=False)
    weighed = deduce.remaining_boards(whole, observations, [x1])
    chance = clues.conference_likelihood(plain, [x1], 2)
    assert plain.likelihood is None and chance is not None and len(set(chance.round(9))) > 2
    assert weighed.rows.tolist() == plain.rows[chance > 0].tolist() and (chance == 0).any()
    kept = chance[chance > 0]
    assert weighed.weights == pytest.approx(kept * len(kept) / kept.sum())


def test_starting_facts_rule_out_and_weigh_boards() -> None:
    facts = [{"sector": 2, "object": "comet"}, {"sector": 6, "object": "asteroid"}]
    as_observations = [{"type": "sector", "present": False, **f} for f in facts]
    with Run(60) as run:
        dealt = deduce.solve({"mode": "standard", "starting_facts": facts}, run)
        plain = deduce.solve({"mode": "standard", "observations": as_observations, "weigh_clues": False}, run)
        unweighed = deduce.solve({"mode": "standard", "starting_facts": facts, "weigh_clues": False}, run)
    assert dealt["starting_facts"] == 2 and dealt["boards"] == plain["boards"] < dealt["total_boards"]
    assert unweighed["sectors"] == plain["sectors"]
    # weighed: a sector named in a fact is less likely empty: holding one of the four objects, it had
    # one fact fewer to choose from, so the one dealt was likelier
    odds = lambda result, sector: result["sectors"][sector - 1]["probabilities"]["empty"]  # noqa: E731
    assert odds(dealt, 6) < odds(plain, 6)
