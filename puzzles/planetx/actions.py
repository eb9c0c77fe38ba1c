"""The actions a Planet X player can take, and what each would tell them about the remaining boards.

Every board is equally likely, so an action's outcome distribution is counted over the remaining boards.
Two measures of an action's worth:
- `bits`: the entropy of its outcome (the seed's measure: information about the whole board);
- `goal_bits`: the mutual information between its outcome and what a player must name to locate Planet X
  (its sector and both neighbours), i.e. information that actually brings the end of the game closer.
Outcomes of all actions are computed at once with numpy, in chunks of boards to bound memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from puzzles.planetx.board import EMPTY, OBJECT_NAMES, PLANET_X, Mode
from puzzles.planetx.boardset import BoardSet
from puzzles.planetx.observations import arc, seen

SURVEY_OBJECTS = ("asteroid", "comet", "dwarf_planet", "gas_cloud", "empty")
TARGET_DAYS = 4
LOCATE_DAYS = 5
MAX_TARGETS = 2
_CELLS_PER_PASS = 4_000_000  # board × action cells per numpy pass (bounds memory)


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


def outcome_name(action: Action, outcome: int) -> str | int:
    """A target's outcome is the object seen; a survey's, the count."""
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


def outcomes(boards: BoardSet, actions: list[Action], rows: slice = slice(None)) -> np.ndarray:
    """boards × actions: each action's outcome on each board (a count, or the object a target sees)."""
    grid = boards.grid[rows]
    out = np.empty((len(grid), len(actions)), dtype=np.int8)
    for obj in SURVEY_OBJECTS:
        picks = [(j, a) for j, a in enumerate(actions) if a.type == "survey" and a.object == obj]
        if not picks:
            continue
        hit = np.isin(grid, seen(obj)).astype(np.int8)
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
    """Per action: outcome counts (actions × outcome values), outcome entropy and goal information."""

    counts: np.ndarray
    bits: np.ndarray
    goal_bits: np.ndarray


def _entropy(counts: np.ndarray, axis: int) -> np.ndarray:
    total = counts.sum(axis=axis, keepdims=True)
    p = np.divide(counts, total, out=np.zeros(counts.shape, dtype=float), where=total > 0)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logs).sum(axis=axis)


def score(boards: BoardSet, actions: list[Action]) -> Scores:
    """Outcome counts, entropy and mutual information with Planet X's triple for every action."""
    values = 10  # outcomes are counts 0..9 or object codes 0..5
    triples, goal = np.unique(boards.planet_x_triples(), return_inverse=True)
    width = len(triples)
    joint = np.zeros(len(actions) * values * width, dtype=np.int64)
    column = np.arange(len(actions), dtype=np.int64) * values
    chunk = max(1_000, _CELLS_PER_PASS // max(1, len(actions)))
    for start in range(0, len(boards), chunk):
        rows = slice(start, start + chunk)
        cells = (outcomes(boards, actions, rows) + column) * width + goal[rows, None]
        joint += np.bincount(cells.ravel(), minlength=joint.size)
    joint = joint.reshape(len(actions), values, width)
    counts = joint.sum(axis=2)
    bits = _entropy(counts, axis=1)
    joint_bits = _entropy(joint.reshape(len(actions), -1), axis=1)
    goal_bits = bits + _entropy(np.bincount(goal, minlength=width)[None, :], axis=1) - joint_bits
    return Scores(counts, bits, np.maximum(goal_bits, 0.0))


def triple_distribution(boards: BoardSet) -> list[tuple[int, int]]:
    """(triple, boards) for every Planet X sector-and-neighbours combination left, most likely first."""
    triples, counts = np.unique(boards.planet_x_triples(), return_counts=True)
    order = np.lexsort((triples, -counts))
    return [(int(triples[i]), int(counts[i])) for i in order]
