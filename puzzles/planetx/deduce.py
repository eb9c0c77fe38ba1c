"""Kind `planetx.deduce`: what the observations leave possible, and the best next action.

Filters every board of the mode (the stored enumeration when there is one) by the observations, then
reports per-sector probabilities, Planet X's candidates, whether its sector and neighbours are known, and
the legal next actions ranked by expected information per day: surveys and targets of the visible sky, and
research of the game's topics (`topics`: letter → the pair of objects the game shows) not yet researched,
unless the last action was research. Conference clues recorded with their `topic` (X1, X2) also rule out,
once all of the mode's are in, the boards the game would not have read them on (`clues.told_apart`).
With `weigh_clues` (the default), probabilities and rankings weigh each board by how likely the game was to
show the recorded research clues (of the `topics` given) and conference clues on it (see `clues`).
The starting facts a game deals by difficulty (`starting_facts`, "sector S is not a T") are facts too
and, weighing, evidence as `starting` models their draw. With `verify_with_z3`, the remaining boards are
also counted by Z3 with the observations as constraints (without that last deduction).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from puzzles.planetx import starting
from puzzles.planetx.actions import (
    MAX_TARGETS,
    AnyAction,
    Research,
    Scores,
    legal_actions,
    outcome_name,
    research_actions,
    score,
)
from puzzles.planetx.board import MODES, OBJECT_NAMES, PLANET_X, Mode
from puzzles.planetx.boardset import BoardSet, all_boards, triple_parts
from puzzles.planetx.clues import (
    CONFERENCE_SPACES,
    TOPIC_LETTERS,
    Topic,
    conference_likelihood,
    hear_conferences,
    hear_research,
    research_topic,
)
from puzzles.planetx.observations import Observation, parse_all
from puzzles.planetx.solver import BoardWalker
from puzzles.runtime import Run

#: Z3 cross-checks count at most this many models
Z3_COUNT_CAP = 20_000
RANKINGS = ("bits_per_day", "goal_bits_per_day")


def remaining_boards(
    boards: BoardSet,
    observations: Sequence[Observation],
    conferences: Sequence[dict[str, Any]] = (),
    research: Sequence[tuple[Topic, dict[str, Any]]] = (),
    weigh: bool = True,
) -> BoardSet:
    """The boards every observation allows; once all the mode's conference clues are among them (clues
    with `topic` X1, X2), also only those where the game could have shown them (`clues.told_apart`).
    With `weigh`, each board is weighted by how likely the game was to show the `research` clues (topic,
    statement) and the conference clues on it (X1 alone as the first of the two)."""
    keep = np.ones(len(boards), dtype=bool)
    for observation in observations:
        keep &= observation.mask(boards.mode, boards.grid)
    left = boards.subset(keep)
    for topic, statement in research if weigh else ():
        left = hear_research(left, topic, statement)
    dealt = len(CONFERENCE_SPACES[boards.mode.name])
    if len(left) and conferences and len(conferences) == dealt:
        left = hear_conferences(left, conferences, weigh)
    elif len(left) and conferences and weigh:
        chance = conference_likelihood(left, conferences, dealt)  # the first of those the game reads
        left = left if chance is None else left.weighted(chance)
    return left


def conference_clues(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded clues of the Planet X conferences (topic X1, X2), in that order."""
    found = [o for o in params.get("observations") or [] if o.get("type") == "clue" and o.get("topic")]
    return sorted((o for o in found if o["topic"] not in TOPIC_LETTERS), key=lambda o: o["topic"])


def z3_count(
    mode: Mode, observations: Sequence[Observation], run: Run, cap: int = Z3_COUNT_CAP
) -> int | None:
    """Boards satisfying the rules and observations, counted by Z3 (None past `cap`)."""
    walker = BoardWalker(mode, ctx=run.context())
    model = walker.model
    found = walker.walker.walk(run, [observation.constraint(model) for observation in observations], cap)
    return len(found.values) if found.complete else None


def sector_table(boards: BoardSet) -> list[dict[str, Any]]:
    total = len(boards)
    table = []
    for index in range(boards.mode.sectors):
        counts = np.bincount(boards.grid[:, index], weights=boards.weights, minlength=6)
        table.append(
            {
                "sector": index + 1,
                "probabilities": {name: float(counts[o] / total) for o, name in enumerate(OBJECT_NAMES)},
            }
        )
    return table


def planet_x_candidates(boards: BoardSet) -> list[dict[str, Any]]:
    where = np.argmax(boards.grid == PLANET_X, axis=1)
    counts = np.bincount(where, weights=boards.weights, minlength=boards.mode.sectors)
    order = sorted((int(i) for i in np.flatnonzero(counts)), key=lambda i: (-counts[i], i))
    return [{"sector": i + 1, "probability": float(counts[i] / len(boards))} for i in order]


def locate_guess(boards: BoardSet) -> dict[str, Any]:
    """The most likely (sector, left, right) to name when locating Planet X."""
    triples, counts = boards.triple_counts()
    sector, left, right = triple_parts(int(triples[0]))
    return {
        "sector": sector,
        "left": OBJECT_NAMES[left],
        "right": OBJECT_NAMES[right],
        "probability": float(counts[0] / len(boards)),
        "candidates": len(triples),
    }


def ranked_actions(
    boards: BoardSet, actions: list[AnyAction], top: int, rank_by: str = "bits_per_day"
) -> list[dict[str, Any]]:
    scores = score(boards, actions)
    bits = scores.goal_bits if rank_by == "goal_bits_per_day" else scores.bits
    per_day = (bits / [a.days for a in actions]).round(12)
    order = sorted(range(len(actions)), key=lambda j: (-per_day[j], j))[:top]
    return [_action_report(actions[j], j, scores, boards) for j in order]


def _action_report(action: AnyAction, j: int, scores: Scores, boards: BoardSet) -> dict[str, Any]:
    total = len(boards)
    if isinstance(action, Research):
        outcomes = _research_outcomes(action, scores.counts[j], boards)
    else:
        outcomes = [
            {"outcome": outcome_name(action, o), "boards": int(n), "probability": float(n / total)}
            for o, n in enumerate(scores.counts[j])
            if n
        ]
    return {
        "action": action.describe(),
        "label": action.label(),
        "days": action.days,
        "bits": float(scores.bits[j]),
        "bits_per_day": float(scores.bits[j] / action.days),
        "goal_bits": float(scores.goal_bits[j]),
        "goal_bits_per_day": float(scores.goal_bits[j] / action.days),
        "outcomes": outcomes,
    }


def _research_outcomes(action: Research, counts: np.ndarray, boards: BoardSet) -> list[dict[str, Any]]:
    """Each statement the topic may show: its expected share of the boards left (they sum to the boards
    left), its probability, and how many boards are left if it is shown."""
    holding = action.topic.true_on(boards.rows).sum(axis=0)
    total = len(boards)
    return [
        {
            "outcome": outcome_name(action, k),
            "boards": float(n),
            "probability": float(n / total),
            "boards_left": int(holding[k]) if k < len(holding) else total,
        }
        for k, n in enumerate(counts)
        if n > 1e-12
    ]


def game_topics(everything: BoardSet, params: dict[str, Any]) -> dict[str, Topic]:
    """The research topics the game shows (letter → its pair of objects)."""
    return {
        letter: research_topic(everything, pair[0], pair[1])
        for letter, pair in (params.get("topics") or {}).items()
    }


def research_clues(params: dict[str, Any], topics: dict[str, Topic]) -> list[tuple[Topic, dict[str, Any]]]:
    """The recorded clues of the game's research topics, each with its topic."""
    return [
        (topics[o["topic"]], o)
        for o in params.get("observations") or []
        if o.get("type") == "clue" and o.get("topic") in topics
    ]


def starting_facts(params: dict[str, Any]) -> list[dict[str, Any]]:
    """The facts the game dealt at the start, as observations ("sector S is not a T")."""
    return [starting.fact(f["sector"], f["object"]) for f in params.get("starting_facts") or []]


def researched_letters(params: dict[str, Any]) -> set[str]:
    """Topics already researched: named in `researched`, or the `topic` of a recorded clue."""
    recorded = {o.get("topic") for o in params.get("observations") or [] if o.get("type") == "clue"}
    return set(params.get("researched") or ()) | (recorded & set(TOPIC_LETTERS))


def solve(params: dict[str, Any], run: Run) -> dict[str, Any]:
    started = time.perf_counter()
    mode = MODES[params["mode"]]
    facts = starting_facts(params)
    observations = parse_all(mode, [*facts, *(params.get("observations") or [])])
    everything = all_boards(mode, run)
    run.raise_if_stopped()
    topics = game_topics(everything, params)
    weigh = params.get("weigh_clues", True)
    boards = remaining_boards(
        everything, observations, conference_clues(params), research_clues(params, topics), weigh
    )
    if weigh and facts and len(boards):
        boards = boards.weighted(starting.likelihood(boards, facts))
    result: dict[str, Any] = {
        "mode": mode.name,
        "starting_facts": len(facts),
        "boards": len(boards),
        "total_boards": len(everything),
        "source": everything.source,
    }
    if params.get("verify_with_z3"):
        result["z3_count"] = z3_count(mode, observations, run)
    if not len(boards):
        return {
            **result,
            "status": "contradiction",
            "message": "no board satisfies every observation: check them for a mistake",
            "seconds": time.perf_counter() - started,
        }
    targets_left = MAX_TARGETS - params.get("targets_used", 0)
    actions: list[AnyAction] = [*legal_actions(mode, params.get("sky_start", 1), targets_left)]
    actions += research_actions(topics, researched_letters(params), params.get("last_action_research", False))
    guess = locate_guess(boards)
    candidates = planet_x_candidates(boards)
    return {
        **result,
        "status": "ok",
        "sectors": sector_table(boards),
        "planet_x": candidates,
        "determined": {"planet_x": len(candidates) == 1, "neighbours": guess["candidates"] == 1},
        "locate": guess,
        "actions": ranked_actions(boards, actions, params.get("top", 10), params.get("rank_by", RANKINGS[0])),
        "seconds": time.perf_counter() - started,
    }
