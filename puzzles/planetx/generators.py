"""How a game deals its clues (`clue_model`), and what each way of dealing tells a player who knows it.

Two models, each behind `ClueModel`:
- `uniform`, zolve's first model (`clues`): six distinct research pairs uniform among those with something
  to say; each topic's statement uniform among its true ones; the conference clues uniform among the sets
  of true statements that tell Planet X apart from every truly empty sector.
- `weighted`, the generator of EluvK/planetx_server (src/map/clue.rs), the most complete public
  re-implementation of the game's app. A clue is drawn as (subject, object, relation): the subject uniform
  among asteroid, comet, dwarf planet and gas cloud, the object among those and truly empty space, the
  relation by weight (all adjacent 200, one adjacent 10, not adjacent 16, one opposite 10, not opposite 12,
  all within range 7, not within range 64; a range's distance uniform: all within 2-4 and not within 3-4,
  expert research 4-6 and 2-3), and the whole draw kept only when the relation is allowed for the pair and
  true on the board. A pair is kept only if no earlier clue has its label (a subject with itself or with
  empty space share one) or is its reverse, and while each object type stays in at most 3 clues, at most
  2 as subject and 2 as object. The Planet X conference clues are drawn the same way (subject Planet X,
  distinct objects, the easy ranges) and the set is redrawn, up to 100 times, until no truly empty sector
  could hold Planet X instead with every clue of the game (research ones too) still true. Rejection
  sampling is the same as drawing a kept (pair, relation) by its weight among those kept, which is how it
  is drawn here, so the chance of what was dealt on each board follows in closed form.

A player who knows the model weighs each board by the chance the game deals what it dealt there
(`pairs_likelihood`, `conference_likelihood`, and `clues.research_likelihood` with the model's `topic`);
one who does not (`clue_model_known: false`) keeps both hypotheses and weighs by their mixture
(`BoardSet.weighted_by_model`), which also learns which model dealt the game. That the weighted
generator redrew the conference set until it told Planet X apart is weighed in too
(`WeightedModel.guarantee_likelihood`): the chance that the clues still to come (research, and before the
last conference clue is read, conference) rule out what those heard leave standing, over the share of
single draws that would have told it apart with the research clues heard and the chance of those to come
(a board where few would have is the likelier to have dealt the one that did). Not used by the player:
the 100 tries' limit, and (in the simulation) a game whose conference clues cannot be dealt after them is
dealt research clues again (the app would end it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from math import factorial, perm
from typing import Protocol, cast
from weakref import WeakKeyDictionary

import numpy as np

from puzzles.planetx import clues
from puzzles.planetx.board import Mode
from puzzles.planetx.boardset import BoardSet
from puzzles.planetx.clues import (
    RESEARCH_OTHERS,
    RESEARCH_SUBJECTS,
    TOPIC_LETTERS,
    Statement,
    Topic,
    _clue,
    _impostors,
    impostor_rows,
)
from puzzles.planetx.observations import parse

Pair = tuple[str, str]
#: per sector, per board: the chance research still to come rules out the impostor there (`_rescues`)
Rescues = dict[int, np.ndarray]
PAIRS: tuple[Pair, ...] = tuple((s, o) for s in RESEARCH_SUBJECTS for o in RESEARCH_OTHERS)
CONFERENCE_OBJECTS = ("comet", "asteroid", "dwarf_planet", "gas_cloud", "empty")
RELATION_WEIGHTS = {
    "all_adjacent": 200,
    "one_adjacent": 10,
    "not_adjacent": 16,
    "one_opposite": 10,
    "not_opposite": 12,
    "all_in_range": 7,
    "not_in_range": 64,
}
CONFERENCE_TRIES = 100
DEAL_TRIES = 20
MAX_CLUES_PER_TYPE, MAX_AS_SUBJECT, MAX_AS_OBJECT = 3, 2, 2


@dataclass
class Streams:
    """A game's random streams: the research clues' and the conference clues' apart, so that every
    policy of the same game hears the same clues."""

    research: np.random.Generator
    conferences: np.random.Generator


@dataclass
class Dealt:
    """What a game deals: its research pairs (letter → pair, shown from the start), the statement each
    shows when researched, and the conference clues in order (X1, X2)."""

    pairs: dict[str, Pair]
    statements: dict[str, Statement]
    conferences: list[Statement]


class ClueModel(Protocol):
    name: str

    def topic(self, boards: BoardSet, pair: Pair) -> Topic: ...

    def deal(self, rngs: Streams, everything: BoardSet, row: int, conferences: int) -> Dealt:
        """The game's clues on the board at `row`, research from `rngs.research`, the `conferences`
        conference clues from `rngs.conferences`."""
        ...

    def pairs_likelihood(self, boards: BoardSet, pairs: dict[str, Pair]) -> np.ndarray:
        """Per board: the chance the game deals these research pairs, in this order."""
        ...

    def conference_likelihood(
        self, boards: BoardSet, shown: list[Statement], count: int | None = None
    ) -> np.ndarray | None:
        """Per board: the chance the first conference clues the game reads, of the `count` it deals (all
        of `shown` when None), are these, in this order (None: it never reads one of them)."""
        ...

    def guarantee_likelihood(
        self,
        boards: BoardSet,
        shown: list[Statement],
        heard: list[Statement],
        unheard: list[Pair],
        count: int | None = None,
    ) -> np.ndarray | None:
        """Per board: how likely what the model guarantees of the clues makes those dealt, given the
        conference clues `shown` (the first of the `count` the game reads), the research clues heard and
        the pairs still unheard (None: nothing beyond `conference_likelihood`)."""
        ...


# -- uniform --------------------------------------------------------------------------------------
class UniformModel:
    name = "uniform"

    def topic(self, boards: BoardSet, pair: Pair) -> Topic:
        return clues.research_topic(boards, *pair)

    def deal(self, rngs: Streams, everything: BoardSet, row: int, conferences: int) -> Dealt:
        topics = clues.draw_topics(rngs.research, everything, row)
        statements = {letter: clues.draw_statement(rngs.research, t, row) for letter, t in topics.items()}
        pairs = {letter: (topic.subject, topic.other) for letter, topic in topics.items()}
        heard = clues.draw_conferences(rngs.conferences, everything, row, conferences) if conferences else []
        return Dealt(pairs, statements, heard)

    def pairs_likelihood(self, boards: BoardSet, pairs: dict[str, Pair]) -> np.ndarray:
        """Six distinct pairs, uniform among the informative ones with a true statement on the board."""
        candidates = _on_rows(boards, self._candidates(boards.whole))
        dealt = [self.topic(boards, pair) for pair in pairs.values()]
        possible = np.ones(len(boards), dtype=bool)
        for topic in dealt:
            possible &= topic.informative & (topic.truth[boards.rows] != 0)
        chance = np.array(
            [1 / perm(n, len(pairs)) if n >= len(pairs) else 0.0 for n in range(len(PAIRS) + 1)]
        )
        return np.where(possible, chance[candidates], 0.0)

    def _candidates(self, whole: BoardSet) -> np.ndarray:
        """Per board of the whole set: how many informative pairs have a true statement there (the pairs
        the game draws from), found once per set."""
        if whole not in _candidates:
            count = np.zeros(len(whole), dtype=np.int64)
            for pair in PAIRS:
                topic = self.topic(whole, pair)
                if topic.informative:
                    count += topic.truth != 0
            _candidates[whole] = count
        return _candidates[whole]

    def conference_likelihood(
        self, boards: BoardSet, shown: list[Statement], count: int | None = None
    ) -> np.ndarray | None:
        """The set is drawn whole and read in a random order."""
        count = len(shown) if count is None else count
        unordered = clues.conference_likelihood(boards, shown, count)
        return None if unordered is None else unordered * factorial(count - len(shown)) / factorial(count)

    def guarantee_likelihood(
        self,
        boards: BoardSet,
        shown: list[Statement],
        heard: list[Statement],
        unheard: list[Pair],
        count: int | None = None,
    ) -> np.ndarray | None:
        return None  # the conference clues alone tell Planet X apart: `conference_likelihood` has it


# -- weighted (EluvK/planetx_server) ----------------------------------------------------------------
def weighted_statements(mode: Mode, subject: str, other: str) -> list[tuple[Statement, float]]:
    """The statements the weighted generator can deal about a pair, each with its weight: a relation's
    weight, shared among the distances its range draws from. Relations the generator refuses for the
    pair are left out; Planet X's "all adjacent" and "one adjacent" say the same and count as one."""
    x = subject == "planet_x"
    easy = x or mode.name == "standard"
    all_within, none_within = ((2, 3, 4), (3, 4)) if easy else ((4, 5, 6), (2, 3))
    same = subject == other
    cloud_space = (subject, other) == ("gas_cloud", "empty")
    w = RELATION_WEIGHTS
    out: list[tuple[Statement, float]] = []
    near = {"object": other}
    if x:
        out.append(
            (_clue("adjacent", subject, **near, quantifier="some"), w["all_adjacent"] + w["one_adjacent"])
        )
        if other != "dwarf_planet":
            out.append((_clue("adjacent", subject, **near, quantifier="none"), w["not_adjacent"]))
    else:
        if not cloud_space and not (same and subject in ("comet", "asteroid")):
            out.append((_clue("adjacent", subject, **near, quantifier="all"), w["all_adjacent"]))
        if not same and not cloud_space:
            out.append((_clue("adjacent", subject, **near, quantifier="some"), w["one_adjacent"]))
            out.append((_clue("adjacent", subject, **near, quantifier="none"), w["not_adjacent"]))
    out.append((_clue("opposite", subject, **near, quantifier="some"), w["one_opposite"]))
    if not same:
        out.append((_clue("opposite", subject, **near, quantifier="none"), w["not_opposite"]))
    share = w["all_in_range"] / len(all_within)
    for n in all_within:
        if same and subject != "dwarf_planet":
            out.append((_clue("band", subject, width=n, exact=False), share))
        elif not same and not cloud_space:
            out.append((_clue("within", subject, **near, quantifier="all", distance=n), share))
    if not same:
        share = w["not_in_range"] / len(none_within)
        out += [(_clue("within", subject, **near, quantifier="none", distance=n), share) for n in none_within]
    return out


def _weighted_topic(
    everything: BoardSet, subject: str, other: str, dealt: list[tuple[Statement, float]]
) -> Topic:
    """A topic over every board of the set, keeping each statement that holds on some board (one that
    holds on none is never dealt; one that holds on all is dealt and tells nothing, but shares the draw)."""
    masks = clues.statement_masks(everything, [statement for statement, _ in dealt])
    keep = [k for k, mask in enumerate(masks) if mask.any()]
    truth = clues.truth_words([masks[k] for k in keep], len(everything))
    informative = any(not masks[k].all() for k in keep)
    weights = np.array([dealt[k][1] for k in keep], dtype=float)
    return Topic(subject, other, tuple(dealt[k][0] for k in keep), truth, informative, weights)


_weighted_topics: WeakKeyDictionary[BoardSet, dict[Pair, Topic]] = WeakKeyDictionary()
_masses: WeakKeyDictionary[BoardSet, dict[Pair, np.ndarray]] = WeakKeyDictionary()
#: per whole set: the uniform model's count of pairs to draw from per board
_candidates: WeakKeyDictionary[BoardSet, np.ndarray] = WeakKeyDictionary()
_mass_totals: WeakKeyDictionary[BoardSet, np.ndarray] = WeakKeyDictionary()  # every pair's mass, summed


def _on_rows(boards: BoardSet, per_board: np.ndarray) -> np.ndarray:
    """`boards`' rows of what is known per board of their whole set (the whole set: all of it)."""
    return per_board if boards.origin is None else per_board[boards.rows]


def _sum(arrays: Iterable[np.ndarray]) -> np.ndarray:
    """Their sum, added in order into one array (the same floats as `sum`, without a new array each)."""
    items = iter(arrays)
    total = np.array(next(items), dtype=float)
    for array in items:
        total += array
    return total


def _label(pair: Pair) -> str:
    subject, other = pair
    return subject if other in (subject, "empty") else f"{subject} {other}"


def pair_allowed(chosen: list[Pair], pair: Pair) -> bool:
    """May the weighted generator keep `pair` after `chosen`? Not with an earlier clue's label or its
    reverse, and each object type in at most 3 clues, at most 2 as subject and 2 as object."""
    subject, other = pair
    if any(_label(c) == _label(pair) or c == (other, subject) for c in chosen):
        return False
    clues_with = Counter(t for c in chosen for t in set(c))
    as_subject = Counter(c[0] for c in chosen)
    as_object = Counter(c[1] for c in chosen)
    return (
        clues_with[subject] < MAX_CLUES_PER_TYPE
        and clues_with[other] < MAX_CLUES_PER_TYPE
        and as_subject[subject] < MAX_AS_SUBJECT
        and as_object[other] < MAX_AS_OBJECT
    )


@lru_cache(maxsize=4096)
def _allowed_sets(pairs: tuple[Pair, ...]) -> tuple[tuple[Pair, ...], ...]:
    """For each position of a dealt sequence of pairs: the pairs the generator could have kept there."""
    return tuple(tuple(p for p in PAIRS if pair_allowed(list(pairs[:i]), p)) for i in range(len(pairs)))


class WeightedModel:
    name = "weighted"

    def topic(self, boards: BoardSet, pair: Pair) -> Topic:
        whole = boards.whole
        known = _weighted_topics.setdefault(whole, {})
        if pair not in known:
            known[pair] = _weighted_topic(whole, *pair, weighted_statements(whole.mode, *pair))
        return known[pair]

    def conference_topic(self, boards: BoardSet) -> Topic:
        whole = boards.whole
        known = _weighted_topics.setdefault(whole, {})
        if ("planet_x", "*") not in known:
            dealt = [d for o in CONFERENCE_OBJECTS for d in weighted_statements(whole.mode, "planet_x", o)]
            known["planet_x", "*"] = _weighted_topic(whole, "planet_x", "*", dealt)
        return known["planet_x", "*"]

    def _mass(self, boards: BoardSet, pair: Pair) -> np.ndarray:
        """Per board: the total weight of the pair's statements that hold (how likely the generator keeps
        the pair), kept per whole set as float32 (a pair's is a float per board)."""
        whole = boards.whole
        masses = _masses.setdefault(whole, {})
        if pair not in masses:
            topic = self.topic(whole, pair)
            masses[pair] = topic.true_weight(topic.truth).astype(np.float32)
        return _on_rows(boards, masses[pair]).astype(float)

    def deal(self, rngs: Streams, everything: BoardSet, row: int, conferences: int) -> Dealt:
        rng = rngs.research
        one = everything.subset(np.array([row]))
        for _ in range(DEAL_TRIES):
            chosen: list[Pair] = []
            while len(chosen) < len(TOPIC_LETTERS):
                allowed = [p for p in PAIRS if pair_allowed(chosen, p)]
                mass = np.array([float(self._mass(one, p)[0]) for p in allowed])
                if not mass.sum():
                    break
                chosen.append(allowed[int(rng.choice(len(allowed), p=mass / mass.sum()))])
            pairs = dict(zip(TOPIC_LETTERS, chosen, strict=False))
            statements = {
                letter: clues.draw_statement(rng, self.topic(everything, pair), row)
                for letter, pair in pairs.items()
            }
            research = list(statements.values())
            heard = self._deal_conferences(rngs.conferences, everything, row, conferences, research)
            if heard is not None:
                return Dealt(pairs, statements, heard)
        return Dealt(
            pairs, statements, self._draw_conferences(rngs.conferences, everything, row, conferences)
        )

    def _draw_conferences(
        self, rng: np.random.Generator, everything: BoardSet, row: int, count: int
    ) -> list[Statement]:
        topic = self.conference_topic(everything)
        true = topic.true_statements(row)
        chosen: list[int] = []
        for _ in range(count):
            objects = {topic.statements[k]["object"] for k in chosen}
            left = [k for k in true if topic.statements[k]["object"] not in objects]
            chances = topic.statement_weights()[left]
            chosen.append(left[int(rng.choice(len(left), p=chances / chances.sum()))])
        return [topic.statements[k] for k in chosen]

    def _deal_conferences(
        self, rng: np.random.Generator, everything: BoardSet, row: int, count: int, research: list[Statement]
    ) -> list[Statement] | None:
        """Up to 100 sets, until one (with the research clues) leaves no truly empty sector that could
        hold Planet X instead; None if none does."""
        if not count:
            return []
        mode = everything.mode
        moved = [m[0] for _, _, m in _impostors(mode, everything.grid[row : row + 1]) if len(m)]
        known = [parse(mode, s) for s in research]
        fooled_by_research = [board for board in moved if all(c.holds(mode, board) for c in known)]
        for _ in range(CONFERENCE_TRIES):
            heard = self._draw_conferences(rng, everything, row, count)
            said = [parse(mode, s) for s in heard]
            if not any(all(c.holds(mode, board) for c in said) for board in fooled_by_research):
                return heard
        return None

    def pairs_likelihood(self, boards: BoardSet, pairs: dict[str, Pair]) -> np.ndarray:
        """Each pair in turn: its weight on the board over that of every pair the generator could have
        kept at that turn."""
        dealt = tuple(pairs.values())
        if not dealt:
            return np.ones(len(boards))
        sets = _allowed_sets(dealt)
        if any(pair not in allowed for pair, allowed in zip(dealt, sets, strict=True)):
            return np.zeros(len(boards))
        masses: dict[Pair, np.ndarray] = {}
        chance = self._first_draw(boards, dealt[0])
        for pair, allowed in zip(dealt[1:], sets[1:], strict=True):
            for p in allowed:
                if p not in masses:
                    masses[p] = self._mass(boards, p)
            chance *= masses[pair] / np.maximum(_sum(masses[p] for p in allowed), 1e-300)
        return chance

    def _first_draw(self, boards: BoardSet, pair: Pair) -> np.ndarray:
        """Per board: the chance the generator's first draw is `pair` (every pair is allowed then; the
        sum of every pair's mass is found once per whole set)."""
        whole = boards.whole
        if whole not in _mass_totals:
            _mass_totals[whole] = np.maximum(_sum(self._mass(whole, p) for p in PAIRS), 1e-300)
        share: np.ndarray = self._mass(boards, pair) / _on_rows(boards, _mass_totals[whole])
        return share

    def conference_likelihood(
        self, boards: BoardSet, shown: list[Statement], count: int | None = None
    ) -> np.ndarray | None:
        """Each clue in turn: its weight over that of the true statements about objects not yet used
        (the clues still to come do not change it; the redraws are `guarantee_likelihood`'s)."""
        topic = self.conference_topic(boards)
        picked = [clues.statement_position(boards.mode, topic.statements, statement) for statement in shown]
        if None in picked:
            return None
        truth = topic.truth[boards.rows]
        weights = topic.statement_weights()
        chance = np.ones(len(boards))
        used: set[str] = set()
        for k in picked:
            assert k is not None
            among = [j for j, s in enumerate(topic.statements) if s["object"] not in used]
            if k not in among:
                return None
            total = sum(weights[j] * ((truth >> np.uint64(j)) & np.uint64(1)) for j in among)
            holds = (truth >> np.uint64(k)) & np.uint64(1)
            chance *= holds * weights[k] / np.maximum(total, 1e-300)
            used.add(topic.statements[k]["object"])
        return chance

    def guarantee_likelihood(
        self,
        boards: BoardSet,
        shown: list[Statement],
        heard: list[Statement],
        unheard: list[Pair],
        count: int | None = None,
    ) -> np.ndarray:
        """Per board: how likely the generator's guarantee makes the clues dealt, given the conference
        clues `shown` (the first of the `count` it reads: all when None), the research clues `heard` and
        the pairs of the topics not yet researched (`unheard`). Every conference clue read: the chance
        that the research clues still to come rule out what those heard leave standing
        (`guarantee_chance`); some still to come: the chance that they complete a set that, with the
        research clues heard and those still to come, tells Planet X apart. Either over the share of the
        generator's draws of conference clues that would have told it apart, the research still to come
        counted the same way (`telling_share`, `_rescues`): the generator redraws until a draw does, so a
        board where few draws would have done is the likelier to have dealt the one that did."""
        count = len(shown) if count is None else count
        rescues = self._rescues(boards, heard, unheard) if unheard else {}
        if len(shown) < count:
            share, completed = self._telling_shares(boards, heard, count, rescues, [[], shown])
            return np.where(share > 0, completed / np.maximum(share, 1e-300), 1.0)
        [share] = self._telling_shares(boards, heard, count, rescues, [[]])
        chance = self.guarantee_chance(boards, shown, heard, unheard)
        return np.where(share > 0, chance / np.maximum(share, 1e-300), chance)

    def telling_share(
        self, boards: BoardSet, heard: list[Statement], count: int, shown: list[Statement] | None = None
    ) -> np.ndarray:
        """Per board: the chance that one draw of `count` conference clues (each by its weight among
        the true statements about objects not yet drawn), its first the clues `shown` if given, rules
        out, with the research clues `heard`, every impostor there (Planet X moved into a truly empty
        sector); 1 where there is none."""
        [share] = self._telling_shares(boards, heard, count, {}, [shown or []])
        return share

    def _telling_shares(
        self,
        boards: BoardSet,
        heard: list[Statement],
        count: int,
        rescues: Rescues,
        firsts: list[list[Statement]],
    ) -> list[np.ndarray]:
        """`telling_share` for each of `firsts` (the clues drawn first), research still to come ruling
        out each impostor a draw leaves with the chance `rescues` gives (`_rescues`); what the clues heard
        leave standing found once."""
        mode = boards.mode
        topic = self.conference_topic(boards)
        true, needed, ruled_out = clues.coverage(boards, topic, [parse(mode, s) for s in heard])
        objects = np.array([statement["object"] for statement in topic.statements])
        standing = _Standing.of(needed, rescues, mode.sectors)
        local_ruled_out = standing.local(ruled_out)
        shares = []
        for shown in firsts:
            picked = [clues.statement_position(mode, topic.statements, statement) for statement in shown]
            if None in picked:  # never drawn: no draw begins with it
                shares.append(np.zeros(len(boards)))
                continue
            weight = topic.statement_weights()[:, None] * true
            covered = np.zeros_like(needed)
            for k in picked:
                assert k is not None
                covered |= ruled_out[k]
                weight = weight * (objects != objects[k])[:, None]
            level, left = _Level.of(weight), count - len(shown)
            local_covered = standing.local(covered)
            shares.append(_telling_draws(level, objects, local_ruled_out, local_covered, left, standing))
        return shares

    def guarantee_chance(
        self, boards: BoardSet, shown: list[Statement], heard: list[Statement], unheard: list[Pair]
    ) -> np.ndarray:
        """Per board: the chance that the game's clues tell Planet X apart from every truly empty sector
        there, as this generator made sure they do, given the conference clues `shown`, the research
        clues `heard` and the pairs of the topics not yet researched (`unheard`), whose statements are
        still to come: each impostor (Planet X moved into a truly empty sector) the clues heard leave
        standing must be ruled out by some topic still to come, each drawn by its weights among the
        statements true on the board. Impostors are taken one by one (their chances multiplied), and
        how hard the generator found it to deal such clues on the board is not weighed."""
        chance = np.ones(len(boards))
        for rescue in self._rescues(boards, [*shown, *heard], unheard).values():
            chance *= rescue
        return chance

    def _rescues(self, boards: BoardSet, said: list[Statement], unheard: list[Pair]) -> Rescues:
        """Per sector holding an impostor that the clues `said` leave standing on some board: per board,
        the chance that a topic still to come (`unheard`, each statement drawn by its weight among those
        true on the board) rules that impostor out; 1 where there is none to rule out."""
        mode = boards.mode
        known = [parse(mode, statement) for statement in said]
        topics = [self.topic(boards.whole, pair) for pair in unheard]
        rescues: Rescues = {}
        for sector, rows, moved in _impostors(mode, boards.grid):
            if known:
                rows = rows[np.logical_and.reduce([clue.mask(mode, moved) for clue in known])]
            if not len(rows):
                continue
            found, held = impostor_rows(boards, rows, sector)
            standing = np.ones(len(rows))
            for topic in topics:
                truth = topic.truth[boards.rows[rows]]
                rules_out = topic.true_weight(truth & ~topic.truth[found])
                standing *= 1 - rules_out / np.maximum(topic.true_weight(truth), 1e-300)
            standing[~held] = 0.0  # not a board of the mode: nothing to rule out
            rescue = np.ones(len(boards))
            rescue[rows] = 1 - standing
            rescues[sector] = rescue
        return rescues


@dataclass(frozen=True)
class _Standing:
    """Per board, the impostors the clues heard leave standing, numbered in sector order (bit i of a
    local bit set: the board's i-th), and the chance research still to come rules out each (0: none
    will). A draw's leaf then looks at a board's few standing impostors, not at every sector."""

    sectors: np.ndarray  # i × boards: the sector of the board's i-th standing impostor, -1 past its last
    rescue: np.ndarray  # i × boards
    everyone: np.ndarray  # per board, a local bit for each of its standing impostors
    #: local bits × boards: the product `told` finds for each set of a board's standing impostors (None:
    #: more sets × boards than PRODUCT_CELLS)
    products: np.ndarray | None

    @classmethod
    def of(cls, needed: np.ndarray, rescues: Rescues, sectors: int) -> _Standing:
        most = int(np.bitwise_count(needed).max(initial=0))
        at = np.full((most, len(needed)), -1, dtype=np.int32)
        rescue = np.ones((most, len(needed)))
        found = np.zeros(len(needed), dtype=np.int32)
        for sector in range(sectors):
            rows = np.flatnonzero(needed & np.int32(1 << sector))
            at[found[rows], rows] = sector
            rescue[found[rows], rows] = rescues[sector][rows] if sector in rescues else 0.0
            found[rows] += 1
        return cls(at, rescue, (np.int32(1) << found) - 1, _products(rescue))

    def local(self, bits: np.ndarray) -> np.ndarray:
        """`bits` (impostors by sector, per board: the last axis) as local bits."""
        out = np.zeros(bits.shape, dtype=np.int32)
        for i, sector in enumerate(self.sectors):
            out |= ((bits >> np.maximum(sector, 0)) & (sector >= 0)) << i
        return out

    def told(self, covered: np.ndarray) -> np.ndarray:
        """Per board: the chance research still to come rules out every standing impostor `covered`
        (local bits) leaves, multiplied in sector order."""
        missing = self.everyone & ~covered
        if self.products is not None:
            return cast(np.ndarray, self.products[missing, np.arange(len(missing))])
        told = np.ones(len(missing))
        for i, rescue in enumerate(self.rescue):
            told = np.where(missing & np.int32(1 << i), told * rescue, told)
        return told


#: the most cells (sets of standing impostors × boards) `_Standing` tabulates its products in
PRODUCT_CELLS = 1 << 21


def _products(rescue: np.ndarray) -> np.ndarray | None:
    """Per set of local bits and board: the product of the rescues of those bits, lowest bit first (the
    same floats `told` multiplies out), found once for the many draws that look them up."""
    sets = 1 << len(rescue)
    if sets * rescue.shape[1] > PRODUCT_CELLS:
        return None
    products = np.ones((sets, rescue.shape[1]))
    for bits in range(1, sets):
        top = bits.bit_length() - 1
        products[bits] = products[bits & ~(1 << top)] * rescue[top]
    return products


@dataclass(frozen=True)
class _Level:
    """The weights of one draw (statements × boards), their total per board and the statements some
    board may draw."""

    weight: np.ndarray
    total: np.ndarray
    drawn: np.ndarray

    @classmethod
    def of(cls, weight: np.ndarray) -> _Level:
        return cls(weight, np.maximum(weight.sum(axis=0), 1e-300), np.flatnonzero(weight.any(axis=1)))


def _telling_draws(
    level: _Level,
    objects: np.ndarray,
    ruled_out: np.ndarray,
    covered: np.ndarray,
    count: int,
    standing: _Standing,
) -> np.ndarray:
    """Per board: the chance that `count` more clues, each drawn by `level`'s weights among those about
    objects not yet drawn, rule out the standing impostors `covered` leaves (`ruled_out`: per statement,
    the standing impostors it rules out; both local bits of `standing`), or research still to come rules
    out those they leave (`standing.told`). The draw after a statement depends only on its object, so
    statements of one object in a row share it."""
    if count == 0:
        return standing.told(covered)
    chance = np.zeros(len(covered))
    after: tuple[str, _Level] | None = None
    for k in level.drawn:
        now = covered | ruled_out[k]
        if count == 1:
            tells = standing.told(now)
        else:
            if after is None or after[0] != objects[k]:
                after = (objects[k], _Level.of(level.weight * (objects != objects[k])[:, None]))
            tells = _telling_draws(after[1], objects, ruled_out, now, count - 1, standing)
        chance += level.weight[k] / level.total * tells
    return chance


MODELS: dict[str, ClueModel] = {"uniform": UniformModel(), "weighted": WeightedModel()}
DEFAULT_MODEL = "uniform"


def hear(
    boards: BoardSet, chances: list[np.ndarray | None], fact: Callable[[BoardSet], np.ndarray]
) -> BoardSet:
    """The boards left once something was dealt, given each of the player's models' chance of dealing it
    per board (None: that model never deals it). One model: weigh by its chance, or take what was dealt
    as a plain fact (`fact`: where it holds) if it never deals it. Several: weigh by each, a model that
    never deals it losing all its weight; a plain fact if none deals it."""
    if len(chances) == 1:
        return boards.subset(fact(boards)) if chances[0] is None else boards.weighted(chances[0])
    if all(chance is None for chance in chances):
        return boards.subset(fact(boards))
    zero = np.zeros(len(boards))
    return boards.weighted_by_model(np.column_stack([zero if c is None else c for c in chances]))
