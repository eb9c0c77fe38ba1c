"""The actions a Planet X player can take, and what each would tell them about the remaining boards.

An action's outcome distribution is counted over the remaining boards, each with its weight (1 unless the
clues heard made some boards likelier than others: `BoardSet.weights`).
Two measures of an action's worth:
- `bits`: the entropy of its outcome (the seed's measure: information about the whole board);
- `goal_bits`: the mutual information between its outcome and what a player must name to locate Planet X
  (its sector and both neighbours), i.e. information that actually brings the end of the game closer.
Outcomes are counted with numpy over classes of boards that no action in question can tell apart.

A research action's outcome is the statement the game draws for its topic (see `clues`): each board shares
itself equally among the topic's statements that hold on it, so its outcome counts are expected boards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union, cast

import numpy as np

from puzzles.planetx.board import EMPTY, OBJECT_NAMES, PLANET_X, Mode
from puzzles.planetx.boardset import BoardSet, unique_inverse, weighted_unique
from puzzles.planetx.clues import Statement, Topic
from puzzles.planetx.observations import any_of, arc, seen

SURVEY_OBJECTS = ("asteroid", "comet", "dwarf_planet", "gas_cloud", "empty")
TARGET_DAYS = 4
LOCATE_DAYS = 5
RESEARCH_DAYS = 1
MAX_TARGETS = 2
OUTCOME_VALUES = 10  # a survey counts 0..9 sectors; a target shows an object code 0..5


def survey_days(width: int) -> int:
    return 4 if width <= 3 else 3 if width <= 6 else 2


def visible_sectors(mode: Mode, sky_start: int) -> list[int]:
    return arc(mode, sky_start, (sky_start + mode.visible - 2) % mode.sectors + 1)


def sky_start_after(mode: Mode, days: int, start: int = 1) -> int:
    """The first visible sector after `days` days (the sky moves one sector a day)."""
    return (start - 1 + days) % mode.sectors + 1


@dataclass(frozen=True)
class Action:
    type: str  # survey | target
    days: int
    sectors: tuple[int, ...]  # 1-based, in order around the circle
    object: str | None = None  # surveys: what is counted

    def describe(self) -> dict[str, Any]:
        if self.type == "target":
            return {"type": "target", "sector": self.sectors[0]}
        return {"type": "survey", "object": self.object, "first": self.sectors[0], "last": self.sectors[-1]}

    def observation(self, outcome: int) -> dict[str, Any]:
        """The observation (JSON form) a player records after seeing `outcome`."""
        if self.type == "target":
            return {"type": "target", "sector": self.sectors[0], "seen": outcome_name(self, outcome)}
        return {**self.describe(), "count": outcome}

    def label(self) -> str:
        if self.type == "target":
            return f"target {self.sectors[0]}"
        return f"survey {self.object} {self.sectors[0]}-{self.sectors[-1]}"


@dataclass(frozen=True, eq=False)
class Research:
    """Research a topic (1 day): the game shows one statement about the topic's pair of objects."""

    letter: str
    topic: Topic
    type: str = "research"
    days: int = RESEARCH_DAYS

    def describe(self) -> dict[str, Any]:
        return {"type": "research", "topic": self.letter}

    def observation(self, outcome: int) -> Statement:
        return {**self.topic.statements[outcome], "topic": self.letter}

    def label(self) -> str:
        return f"research {self.letter}: {self.topic.label()}"


AnyAction = Union[Action, Research]  # noqa: UP007 (a runtime alias)


def research_actions(
    topics: dict[str, Topic], researched: set[str], last_was_research: bool
) -> list[Research]:
    """Every topic not yet researched, unless the last action was research (never twice in a row)."""
    if last_was_research:
        return []
    return [Research(letter, topic) for letter, topic in sorted(topics.items()) if letter not in researched]


def outcome_name(action: AnyAction, outcome: int) -> str | int | Statement | None:
    """A target's outcome is the object seen; a survey's, the count; research, the statement shown."""
    if isinstance(action, Research):
        statements = action.topic.statements
        return statements[outcome] if outcome < len(statements) else None
    return OBJECT_NAMES[outcome] if action.type == "target" else outcome


def legal_actions(
    mode: Mode, sky_start: int, targets_left: int = MAX_TARGETS, surveys: bool = True, targets: bool = True
) -> list[Action]:
    """Every survey of consecutive visible sectors (comet surveys start and end on primes) and, while
    targets remain, every visible sector as a target."""
    visible = visible_sectors(mode, sky_start)
    actions: list[Action] = []
    if surveys:
        for obj in SURVEY_OBJECTS:
            for i in range(len(visible)):
                for width in range(1, len(visible) - i + 1):
                    sectors = tuple(visible[i : i + width])
                    if obj == "comet" and not (sectors[0] in mode.primes and sectors[-1] in mode.primes):
                        continue
                    actions.append(Action("survey", survey_days(width), sectors, obj))
    if targets and targets_left > 0:
        actions += [Action("target", TARGET_DAYS, (s,)) for s in visible]
    return actions


def outcomes(boards: BoardSet, actions: list[Action]) -> np.ndarray:
    """boards × actions: each action's outcome on each board (a count, or the object a target sees)."""
    grid = boards.grid
    out = np.empty((len(grid), len(actions)), dtype=np.int8)
    for obj in SURVEY_OBJECTS:
        picks = [(j, a) for j, a in enumerate(actions) if a.type == "survey" and a.object == obj]
        if not picks:
            continue
        hit = any_of(grid, seen(obj)).astype(np.int8)
        running = np.zeros((len(grid), 2 * boards.mode.sectors + 1), dtype=np.int8)
        np.cumsum(np.concatenate([hit, hit], axis=1), axis=1, out=running[:, 1:])
        starts = np.array([a.sectors[0] - 1 for _, a in picks])
        ends = starts + np.array([len(a.sectors) for _, a in picks])
        out[:, [j for j, _ in picks]] = running[:, ends] - running[:, starts]
    targets = [(j, a.sectors[0] - 1) for j, a in enumerate(actions) if a.type == "target"]
    if targets:
        shown = np.where(
            grid[:, [s for _, s in targets]] == PLANET_X, EMPTY, grid[:, [s for _, s in targets]]
        )
        out[:, [j for j, _ in targets]] = shown
    return out


@dataclass
class Scores:
    """Per action: outcome counts (boards per outcome value; expected boards for research), the information
    its outcome gives about the board (`bits`: for surveys and targets the outcome's entropy) and about
    Planet X's triple (`goal_bits`)."""

    counts: list[np.ndarray]
    bits: np.ndarray
    goal_bits: np.ndarray


def entropy_bits(counts: np.ndarray, axis: int = -1) -> np.ndarray:
    """Shannon entropy (bits) of the distributions given as counts along `axis`."""
    total = counts.sum(axis=axis, keepdims=True)
    p = np.divide(counts, total, out=np.zeros(counts.shape, dtype=float), where=total > 0)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return cast(np.ndarray, -(p * logs).sum(axis=axis))


def score(boards: BoardSet, actions: Sequence[AnyAction]) -> Scores:
    """Outcome counts, entropy and mutual information with Planet X's triple for every action.

    Counts are taken over (what the action can see, triple) classes rather than over boards: a survey
    only sees which of its sectors hold the surveyed object, so the boards collapse to one bit pattern
    over the surveyed sectors per triple, and every survey of that object reads its count off the
    pattern. A million expert boards become a few hundred thousand weighted classes at most."""
    triples, goal = unique_inverse(boards.planet_x_triples())
    width = len(triples)
    joint = np.zeros((len(actions), OUTCOME_VALUES, width))
    weights = boards.likelihood  # None: every board counts 1
    research = {
        j: _research_joint(boards, action.topic, goal, width)
        for j, action in enumerate(actions)
        if isinstance(action, Research)
    }
    plain = [(j, a) for j, a in enumerate(actions) if isinstance(a, Action)]
    for obj in SURVEY_OBJECTS:
        picks = [(j, a) for j, a in plain if a.type == "survey" and a.object == obj]
        if picks:
            _survey_joint(boards, obj, picks, goal, width, joint)
    for j, action in plain:
        if action.type == "target":
            column = boards.grid[:, action.sectors[0] - 1]
            shown = np.where(column == PLANET_X, EMPTY, column).astype(np.int64)
            joint[j] = np.bincount(
                shown * width + goal, weights=weights, minlength=OUTCOME_VALUES * width
            ).reshape(-1, width)
    counts = list(joint.sum(axis=2))
    bits = entropy_bits(joint.sum(axis=2), axis=1)
    joint_bits = entropy_bits(joint.reshape(len(actions), -1), axis=1)
    for j, (table, draw_bits) in research.items():
        counts[j] = table.sum(axis=1)
        bits[j] = entropy_bits(counts[j]) - draw_bits
        joint_bits[j] = entropy_bits(table.reshape(-1)) - draw_bits
    goal_bits = bits + entropy_bits(np.bincount(goal, weights=weights, minlength=width)) - joint_bits
    return Scores(counts, bits, np.maximum(goal_bits, 0.0))


def _research_joint(boards: BoardSet, topic: Topic, goal: np.ndarray, width: int) -> tuple[np.ndarray, float]:
    """statements (+1: "nothing the topic may say holds") × triples: expected boards, each board split
    among the statements true on it as the game draws them (by their weights; uniform without); and the
    bits of that split (the draw's own randomness, to take off the outcome's entropy: what a research
    tells about the board is H(shown) - H(shown | board))."""
    size = len(topic.statements)
    distinct, ids = topic.word_index
    classes, weights = weighted_unique(ids[boards.rows].astype(np.int64) * width + goal, boards.likelihood)
    words, triples = distinct[classes // width], classes % width
    true = (words[:, None] >> np.arange(size)) & 1
    chance = true * topic.statement_weights()
    total = chance.sum(axis=1)
    nothing = total == 0
    chance /= np.maximum(total, 1e-300)[:, None]
    table = np.zeros((size + 1, width))
    for k in range(size):
        table[k] = np.bincount(triples, weights=chance[:, k] * weights, minlength=width)
    table[size] = np.bincount(triples[nothing], weights=weights[nothing], minlength=width)
    logs = np.log2(chance, out=np.zeros_like(chance), where=chance > 0)
    draw_bits = float((weights * -(chance * logs).sum(axis=1)).sum() / weights.sum())
    return table, draw_bits


def _survey_joint(
    boards: BoardSet,
    obj: str,
    picks: list[tuple[int, Action]],
    goal: np.ndarray,
    width: int,
    joint: np.ndarray,
) -> None:
    """Fill `joint[j]` (outcome × triple counts) for the surveys `picks` of one object."""
    columns = sorted({s - 1 for _, a in picks for s in a.sectors})
    bit_of = {c: 1 << i for i, c in enumerate(columns)}
    hit = any_of(boards.grid[:, columns], seen(obj))
    pattern = np.zeros(len(hit), dtype=np.int64)
    for bit in range(len(columns)):  # column by column: a boards × columns integer array costs more
        pattern |= hit[:, bit].astype(np.int64) << bit
    classes, weights = weighted_unique(pattern * width + goal, boards.likelihood)
    patterns, triples = classes // width, classes % width
    popcount = np.array([bin(m).count("1") for m in range(1 << len(columns))], dtype=np.int64)
    for j, action in picks:
        mask = sum(bit_of[s - 1] for s in action.sectors)
        seen_count = popcount[patterns & mask]
        joint[j] = np.bincount(
            seen_count * width + triples, weights=weights, minlength=OUTCOME_VALUES * width
        ).reshape(-1, width)
